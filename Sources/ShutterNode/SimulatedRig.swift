import ShutterCapture
import ShutterCore
import ShutterService

/// A board run with `--simulate`: its lines on the mock chip (names and roles kept, so the
/// simulator's keys, traces and demo session drive them as on the simulator board) and its
/// camera replaced by the simulated camera module it names, through the libcamera backend.
///
/// Photos go to a local directory unless one is given: a rig's own output directory
/// (`/var/lib/shutter/photos`) is rarely writable where a rig is simulated, and a photo of a
/// simulation is not the rig's.
public struct SimulatedRig {
    /// The board as the daemon runs it: chip `simulator`, the output directory replaced.
    public private(set) var board: Board
    /// The camera module in place of the board's camera; `nil` keeps a synthetic camera.
    public let module: SimulatedCameraModule?
    /// Where photos go when no directory is given.
    public static let defaultOutputDirectory = "photos"

    /// - Parameters:
    ///   - board: the board file as loaded.
    ///   - moduleName: the module asked for (`imx477`); `nil` takes the one the board's camera
    ///     names, else the Camera Module 3 (``SimulatedCameraModule/standingIn(for:)``).
    ///   - outputDirectory: where photos go; `nil` for ``defaultOutputDirectory``.
    /// - Throws: ``CommandFailure`` naming the module asked for when it is not one shutter simulates.
    public init(board: Board, moduleName: String? = nil, outputDirectory: String? = nil) throws {
        if let moduleName {
            guard let module = SimulatedCameraModule(rawValue: moduleName.lowercased()) else {
                throw CommandFailure("--camera-module '\(moduleName)' is not a camera module shutter simulates; "
                    + "one of \(SimulatedCameraModule.choices)")
            }
            self.module = module
        } else {
            module = SimulatedCameraModule.standingIn(for: board.camera)
        }
        var board = board
        board.chip = .simulator
        board.output.directory = outputDirectory ?? Self.defaultOutputDirectory
        if let module {
            // The libcamera path's own defaults: the module's full still size unless the board asks for one.
            board.camera.backend = .libcamera
            board.camera.device = module.rawValue
        }
        self.board = board
    }

    /// Opens the simulated module for the daemon's capture services; `nil` for the synthetic camera.
    public var cameraFactory: CameraFactory? { module?.factory() }

    /// One line for standard error: what is simulated and where photos go.
    public var summary: String {
        let camera = module.map { "the simulated \($0.rawValue) (\($0.productName)) through the libcamera backend" }
            ?? "the synthetic camera"
        return "simulating board \(board.name): its \(board.lines.count) lines on the mock chip, \(camera); photos in \(board.output.directory)/"
    }
}
