// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "shutter",
    products: [
        .executable(name: "shutter", targets: ["shutter"]),
        /// The libcamera backend as a plugin, `libshutter-libcamera.so`, beside `shutter` in the
        /// build directory; `swift build` builds it (`--product shutter` alone does not).
        .library(name: "shutter-libcamera", type: .dynamic, targets: ["CLibcameraBackend"]),
    ],
    targets: [
        // MARK: C libraries (system-library targets, their thin C shims, and the libraries opened on demand)

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
        /// The V4L2 ioctls through the C library (so LD_PRELOAD layers like libcamerify see them),
        /// with wrappers for variadic functions and macros; libv4lconvert for formats to convert.
        .systemLibrary(
            name: "CV4L2",
            pkgConfig: "libv4lconvert",
            providers: [.apt(["libv4l-dev"])]
        ),
        /// libjpeg-turbo's TurboJPEG API: encodes raw frames.
        .systemLibrary(
            name: "CTurboJPEG",
            pkgConfig: "libturbojpeg",
            providers: [.apt(["libturbojpeg0-dev"])]
        ),
        /// libyuv: SIMD format conversions where TurboJPEG cannot take a layout as is (NV12's chroma).
        /// Debian 12 has no libyuv.pc: the module map links it.
        .systemLibrary(
            name: "CYUV",
            providers: [.apt(["libyuv-dev"])]
        ),
        /// libexif: the EXIF block in each photo.
        .systemLibrary(
            name: "CExif",
            pkgConfig: "libexif",
            providers: [.apt(["libexif-dev"])]
        ),

        /// libmicrohttpd (0.9.75 on Debian 12, 1.0 on Debian 13): the HTTP server of live view, polled
        /// from the daemon's own loop through its epoll descriptor.
        ///
        /// Not linked: opened with `dlopen` when the board has an `http` section, so a board without
        /// one does not map GnuTLS and the rest it brings (peak RSS). The target defines
        /// the `MHD_*` functions shutter calls, forwarding to the library; the header is
        /// libmicrohttpd-dev's, in /usr/include (no pkg-config flags needed).
        .target(
            name: "CMicroHTTPD",
            dependencies: ["CShutterSystem"]
        ),

        /// libqrencode: the live view's link as a QR code on the terminal, for a phone to scan.
        .systemLibrary(
            name: "CQRencode",
            pkgConfig: "libqrencode",
            providers: [.apt(["libqrencode-dev"])]
        ),

        /// libmosquitto (MQTT v5 client): a multi-camera rig's nodes meet at a broker; polled from
        /// the daemon's own loop through its socket.
        ///
        /// Not linked: opened with `dlopen` when the board has an `mqtt` section, so a board without
        /// one does not map libssl and libcrypto (peak RSS). The target defines the
        /// `mosquitto_*` functions shutter calls, forwarding to the library; the header is
        /// libmosquitto-dev's, in /usr/include (no pkg-config flags needed).
        .target(
            name: "CMosquitto",
            dependencies: ["CShutterSystem"]
        ),

        /// libcamera's flags from pkg-config, for the C++ backend (Swift never imports libcamera's C++ headers).
        .systemLibrary(
            name: "CLibcamera",
            pkgConfig: "libcamera",
            providers: [.apt(["libcamera-dev"])]
        ),
        /// One C interface over libcamera 0.0.3 (Debian 12) and the newer API (trixie), with a fake
        /// camera: the `shutter-libcamera` plugin, the only code that links libcamera. No module
        /// imports it: CLibcameraLoader's header includes its `shutter_libcamera.h`.
        ///
        /// swiftc links the plugin, and would make it need the shared Swift runtime (a second one
        /// in the release build, whose runtime is static) and start it with swiftrt.o, which
        /// registers the image with that runtime: the plugin is C++ only, so neither (the static
        /// runtime's archives given instead are left unused).
        .target(
            name: "CLibcameraBackend",
            dependencies: ["CLibcamera"],
            linkerSettings: [.unsafeFlags(["-nostartfiles", "-static-stdlib"])]
        ),
        /// The libcamera backend's C interface, each function forwarding to the plugin, opened with
        /// `dlopen` when a board's camera may be a libcamera one, so that a simulator board or a
        /// USB webcam's does not map libcamera and the libraries it links (peak RSS).
        .target(
            name: "CLibcameraLoader",
            dependencies: ["CShutterSystem"]
        ),

        /// Linux system headers Swift's Glibc module leaves out (signalfd, adjtimex, prctl), and the
        /// one way the loaders open a library on first use (dlopen).
        .target(
            name: "CShutterSystem",
            linkerSettings: [.linkedLibrary("dl")]
        ),

        // MARK: Swift modules

        /// Pure logic: board model, state machines, events, clock, trace format. No C imports but
        /// the C library's (maths, and the board file's bounded read), which Foundation used to bring.
        .target(name: "ShutterCore", exclude: ["Events/EVENTS.md"]),
        /// The operating system in small typed wrappers: errno and the one EINTR retry, file
        /// descriptors, atomic files, clocks, the event loop and its mailbox, Unix sockets,
        /// standard output's writer, the log, systemd notification.
        .target(
            name: "ShutterSystem",
            dependencies: ["ShutterCore", "CShutterSystem"]
        ),
        /// GPIO through libgpiod: the only Swift code that calls `gpiod_*` (through the backend).
        .target(
            name: "ShutterGPIO",
            dependencies: ["ShutterCore", "ShutterSystem", "CGPIODBackend"]
        ),
        /// Stills: V4L2 cameras and the synthetic one, the zero-shutter-lag ring, JPEG and EXIF,
        /// atomic photo files. The only Swift code that calls V4L2, libv4lconvert, TurboJPEG and libexif.
        .target(
            name: "ShutterCapture",
            dependencies: ["ShutterCore", "ShutterSystem", "CV4L2", "CTurboJPEG", "CExif", "CYUV", "CLibcameraLoader", "CShutterSystem"]
        ),
        /// A small driver of the capture module alone, for its VM checks and the press → JPEG benchmark
        /// (`Tests/VM/bench-press.sh`): no daemon, no GPIO.
        .executableTarget(
            name: "shutter-capture-check",
            dependencies: ["ShutterCore", "ShutterSystem", "ShutterCapture"]
        ),
        /// The service: the lines, the state machines, the camera, hooks, feedback and systemd
        /// around one event loop, and the port its transports use (commands, events, status, the
        /// live view). It knows no transport. Tests drive it with the mock chip and synthetic camera.
        .target(
            name: "ShutterService",
            dependencies: ["ShutterCore", "ShutterSystem", "ShutterGPIO", "ShutterCapture", "CShutterSystem"]
        ),
        /// The local API: a Unix socket of JSON lines, who may control and who may only look.
        .target(
            name: "ShutterAPI",
            dependencies: ["ShutterCore", "ShutterSystem", "ShutterService"]
        ),
        /// Live view over HTTP: the page, MJPEG previews, photos and thumbnails, the token.
        .target(
            name: "ShutterHTTP",
            dependencies: ["ShutterCore", "ShutterSystem", "ShutterService", "CMicroHTTPD"]
        ),
        /// A rig's node on MQTT: shots between nodes, results, Home Assistant discovery.
        .target(
            name: "ShutterMQTT",
            dependencies: ["ShutterCore", "ShutterSystem", "ShutterService", "CMosquitto"]
        ),
        /// One node as `shutter run` runs it: the service and the transports the board and the
        /// options ask for, made in one place; the terminal's overlay, the simulator's keys and
        /// demo, the simulated Pi rig, and the live view's QR code.
        .target(
            name: "ShutterNode",
            dependencies: ["ShutterCore", "ShutterSystem", "ShutterCapture", "ShutterService", "ShutterAPI", "ShutterHTTP", "ShutterMQTT",
                           "CQRencode"]
        ),
        /// The command-line tool: thin commands over the node, the service and the modules under them.
        ///
        /// Its release build links the Swift standard library, Dispatch and FoundationEssentials
        /// statically: only the code it uses is mapped, which lowers the streaming daemon's peak
        /// RSS (about 3 MiB on the simulator board) and its start-up time; the debug build and the
        /// tests keep the shared libraries. The modules are
        /// compiled against the shared FoundationEssentials, which carries its two helper
        /// libraries inside; statically they are archives of their own, named here.
        .executableTarget(
            name: "shutter",
            dependencies: ["ShutterCore", "ShutterSystem", "ShutterGPIO", "ShutterCapture", "ShutterService", "ShutterAPI", "ShutterHTTP", "ShutterMQTT", "ShutterNode", "CShutterSystem"],
            linkerSettings: [
                .unsafeFlags(["-static-stdlib"], .when(configuration: .release)),
                // Linked by lld (in the toolchain: swift.org's and Debian's swiftlang alike) with
                // its 40 000 relative relocations packed (DT_RELR, glibc 2.36), so their table is
                // 8 KiB, not 947 KiB read whole at every start (0.7 MiB of peak RSS).
                // Nor does it export its 6 000 symbols (the driver's -export-dynamic: nothing looks
                // them up; the libraries it opens call only their own): 0.4 MiB more.
                .unsafeFlags(["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
                              "-Xlinker", "--no-export-dynamic"], .when(configuration: .release)),
                .linkedLibrary("_FoundationCShims", .when(configuration: .release)),
                .linkedLibrary("_FoundationCollections", .when(configuration: .release)),
            ]
        ),

        /// Throughput of the gesture state machines on a long synthetic trace (release build).
        .executableTarget(
            name: "shutter-bench",
            dependencies: ["ShutterCore", "ShutterSystem"]
        ),

        /// The daemon as a service, measured against a real `shutter run`: start-up, API round trip,
        /// event → subscriber delay, RSS, idle CPU (release build).
        .executableTarget(
            name: "shutter-daemon-bench",
            dependencies: ["ShutterSystem"]
        ),

        // MARK: Tests

        /// What both capture and daemon tests use: a camera to subclass, a sleep.
        .target(
            name: "ShutterTestSupport",
            dependencies: ["ShutterCore", "ShutterSystem", "ShutterCapture"],
            path: "Tests/ShutterTestSupport"
        ),
        .testTarget(
            name: "ShutterCoreTests",
            dependencies: ["ShutterCore"]
        ),
        .testTarget(
            name: "ShutterSystemTests",
            dependencies: ["ShutterSystem", "ShutterCore", "CShutterSystem"]
        ),
        .testTarget(
            name: "ShutterCaptureTests",
            dependencies: ["ShutterCore", "ShutterSystem", "ShutterCapture", "ShutterTestSupport"]
        ),
        .testTarget(
            name: "ShutterServiceTests",
            dependencies: ["ShutterCore", "ShutterSystem", "ShutterCapture", "ShutterService", "ShutterAPI", "ShutterHTTP",
                           "ShutterMQTT", "ShutterNode", "ShutterTestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6],
    cxxLanguageStandard: .cxx17
)
