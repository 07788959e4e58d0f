// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "shutter",
    products: [
        .executable(name: "shutter", targets: ["shutter"]),
    ],
    targets: [
        // MARK: C libraries (system-library targets and their thin C shims)

        /// libgpiod's header, found through pkg-config; 1.6 (Debian 12) or 2.x (Debian 13).
        .systemLibrary(
            name: "CGPIOD",
            pkgConfig: "libgpiod",
            providers: [.apt(["libgpiod-dev"])]
        ),
        /// One stable C interface over both libgpiod APIs, chosen by `#if` on the header.
        .target(
            name: "CGPIODBackend",
            dependencies: ["CGPIOD"]
        ),

        /// Linux system headers Swift's Glibc module leaves out (signalfd).
        .target(name: "CShutterSystem"),

        // MARK: Swift modules

        /// Pure logic: board model, state machines, events, clock, trace format. No C imports.
        .target(name: "ShutterCore", exclude: ["Events/EVENTS.md"]),
        /// GPIO through libgpiod: the only Swift code that calls `gpiod_*` (through the backend).
        .target(
            name: "ShutterGPIO",
            dependencies: ["ShutterCore", "CGPIODBackend"]
        ),
        /// The daemon and its commands: a thin interpreter around the state machines.
        .executableTarget(
            name: "shutter",
            dependencies: ["ShutterCore", "ShutterGPIO", "CShutterSystem"]
        ),

        /// Throughput of the gesture state machines on a long synthetic trace (release build).
        .executableTarget(
            name: "shutter-bench",
            dependencies: ["ShutterCore"]
        ),

        // MARK: Tests

        .testTarget(
            name: "ShutterCoreTests",
            dependencies: ["ShutterCore"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
