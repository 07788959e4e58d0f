import ShutterCore

/// The backend that opens the board's camera: `libcamera` and `v4l2` as the board says; `auto`
/// is libcamera when it lists the camera the board names (by id or model, or any camera for the
/// name `libcamera`), else V4L2. A device path (`/dev/video0`) is always V4L2 (libcamera ids of
/// Raspberry Pi camera modules start with `/base/`, so only `/dev/` counts as a path).
public func chooseBackend(settings: CameraSettings, libcameraCameras: [LibcameraEntry]) -> CameraBackend {
    switch settings.backend {
    case .libcamera, .v4l2: return settings.backend
    case .auto:
        if settings.device.hasPrefix("/dev/") { return .v4l2 }
        let name = settings.device
        let listed = libcameraCameras.contains { $0.id == name || $0.model.lowercased() == name.lowercased() }
            || (name == "libcamera" && !libcameraCameras.isEmpty)
        return listed ? .libcamera : .v4l2
    }
}
