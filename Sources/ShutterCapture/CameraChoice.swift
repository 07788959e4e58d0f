import ShutterCore

/// The backend that opens the board's camera: `libcamera` and `v4l2` as the board says; `auto`
/// is libcamera when it lists the camera the board names (by id or model, or any camera for the
/// name `libcamera`), else V4L2. A device path (`/dev/video0`) is always V4L2 (libcamera ids of
/// Raspberry Pi camera modules start with `/base/`, so only `/dev/` counts as a path).
public func chooseBackend(settings: CameraSettings, libcameraCameras: [LibcameraEntry]) -> CameraBackend {
    switch settings.backend {
    case .libcamera, .v4l2: return settings.backend
    case .auto:
        // A board naming no camera takes libcamera's first when there is one (a camera module).
        guard let name = settings.device else { return libcameraCameras.isEmpty ? .v4l2 : .libcamera }
        if name.hasPrefix("/dev/") { return .v4l2 }
        let listed = libcameraCameras.contains { $0.id == name || $0.model.lowercased() == name.lowercased() }
            || (name == "libcamera" && !libcameraCameras.isEmpty)
        return listed ? .libcamera : .v4l2
    }
}

/// The camera a board's `camera` section opens, and how it was found (for `shutter check`).
public struct CameraChoice: Hashable, Sendable {
    public enum Source: Hashable, Sendable {
        /// The built-in test pattern, only when the board names `synthetic`.
        case synthetic
        /// A libcamera camera by id or model; `""` is libcamera's first.
        case libcamera(String)
        /// A V4L2 device by path or card name.
        case v4l2(String)
    }

    public var source: Source
    /// Why this camera, when the board did not name it outright: `the first libcamera camera (camera.device not given)`.
    public var reason: String?
    /// Why libcamera was not asked, when its backend could not be loaded and V4L2's camera was
    /// taken instead (the load error): a Pi camera module libcamera would have opened is not
    /// used, so the daemon warns each time it opens such a choice.
    public var libcameraUnavailable: String?

    public init(_ source: Source, reason: String? = nil, libcameraUnavailable: String? = nil) {
        self.source = source
        self.reason = reason
        self.libcameraUnavailable = libcameraUnavailable
    }
}

/// Chooses the camera `settings` asks for among the cameras there are.
///
/// `synthetic` only when named. Without `device`: the first camera libcamera lists, else the
/// first V4L2 capture device (with `backend` `libcamera` or `v4l2`, only that backend's first).
/// `libcamera` names the first libcamera camera. Other names go to the backend
/// ``chooseBackend(settings:libcameraCameras:)`` picks, which looks the name up itself.
///
/// - Parameters:
///   - libcameraCameras: what libcamera lists (`[]` when it cannot list, as under libcamerify).
///   - v4l2Devices: the V4L2 capture devices' paths, in number order (only asked for without `device`).
/// - Throws: ``CaptureError/noDevice(requested:available:backend:)`` naming the backend that has
///   no camera, when the board asks for a first camera and there is none.
public func chooseCamera(settings: CameraSettings, libcameraCameras: [LibcameraEntry],
                         v4l2Devices: () -> [String]) throws(CaptureError) -> CameraChoice {
    if settings.device == "synthetic" { return CameraChoice(.synthetic) }
    let firstLibcamera = libcameraCameras.first.map { entry in
        CameraChoice(.libcamera(entry.id), reason: "the first libcamera camera, \(entry.id)\(entry.model.isEmpty ? "" : " (\(entry.model))")")
    }
    switch (settings.device, settings.backend) {
    case (nil, .v4l2):
        guard let path = v4l2Devices().first else { throw CaptureError.noDevice(requested: nil, available: [], backend: .v4l2) }
        return CameraChoice(.v4l2(path), reason: "the first V4L2 capture device, \(path) (camera.device not given)")
    case (nil, .libcamera), ("libcamera", .libcamera):
        guard let first = firstLibcamera else {
            throw CaptureError.noDevice(requested: settings.device, available: [], backend: .libcamera)
        }
        return CameraChoice(first.source, reason: first.reason! + (settings.device == nil ? " (camera.device not given)" : ""))
    case (nil, .auto):
        if let first = firstLibcamera { return CameraChoice(first.source, reason: first.reason! + " (camera.device not given)") }
        guard let path = v4l2Devices().first else { throw CaptureError.noDevice(requested: nil, available: [], backend: .auto) }
        return CameraChoice(.v4l2(path), reason: "the first V4L2 capture device, \(path) (camera.device not given; libcamera lists no camera)")
    case (.some(let name), _):
        switch chooseBackend(settings: settings, libcameraCameras: libcameraCameras) {
        case .libcamera:
            if name == "libcamera", let first = firstLibcamera { return first }
            return CameraChoice(.libcamera(name))
        case .v4l2, .auto:
            return CameraChoice(.v4l2(name))
        }
    }
}
