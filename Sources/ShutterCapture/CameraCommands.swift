#if canImport(Glibc)
import Glibc
#endif
import ShutterCore
import ShutterSystem

/// The library side of `shutter cameras` and `shutter capture`.
public enum CameraCommands {
    /// Every V4L2 device `/dev/video*`: card, driver, formats and sizes, controls, and which of
    /// zoom, exposure bias and focus it can serve. Devices that cannot be opened say why.
    public static func listCameras() -> String {
        listLibcameraCameras() + listV4L2Cameras()
    }

    /// Every camera libcamera lists: id, model, formats with sizes, controls with ranges, and
    /// how it serves zoom, exposure bias and focus. Board `device` takes the id or the model.
    public static func listLibcameraCameras() -> String {
        do throws(CaptureError) {
            try loadLibcamera()
        } catch {
            return "libcamera: \(error)\n\n"
        }
        let (header, runtime) = libcameraVersions
        let entries: [LibcameraEntry]
        do throws(CaptureError) {
            entries = try libcameraCameras()
        } catch {
            return "libcamera \(runtime): cannot list cameras: \(error)\n\n"
        }
        if entries.isEmpty {
            return "libcamera \(runtime) (built against \(header)): no cameras (Raspberry Pi camera modules appear here; see Deploy/CAMERAS.md)\n\n"
        }
        var out = ""
        for entry in entries {
            var settings = CameraSettings()
            settings.device = entry.id
            out += "libcamera: \(entry.id)\(entry.model.isEmpty ? "" : " (model \(entry.model))")\n"
            let camera: LibcameraCamera
            do throws(CaptureError) {
                camera = try LibcameraCamera(settings: settings)
            } catch {
                out += "  \(error)\n\n"
                continue
            }
            out += describe(camera)
            camera.close()
        }
        return out
    }

    /// The formats, controls and what they serve of an open libcamera camera, indented, for `shutter cameras`.
    public static func describe(_ camera: LibcameraCamera) -> String {
        var out = "  formats:\n"
        for format in camera.offeredFormats() {
            let sizes = format.sizes.count > 12
                ? "\(format.sizes.count) sizes \(format.sizes.last!)...\(format.sizes.first!)"
                : format.sizes.map(\.description).joined(separator: " ")
            out += "    \(format.name): \(sizes)\n"
        }
        out += "  controls:\(camera.libcameraControls.isEmpty ? " none" : "")\n"
        for control in camera.libcameraControls.sorted(by: { $0.name < $1.name }) {
            if control.type == .rectangle {
                out += "    \(control.name) [rectangle]\(control.role == .scalerCrop ? camera.scalerCropMaximum.map { " up to \($0)" } ?? "" : "")\n"
            } else {
                out += "    \(control.name) [\(control.type)] \(control.minimum.shortDescription)...\(control.maximum.shortDescription) default \(control.defaultValue.shortDescription)\n"
            }
        }
        out += "  serves:\n"
        for line in LibcameraControlAdapter(camera: camera).summary { out += "    \(line)\n" }
        if camera.ownDeviceNodes < 0 {
            let errno = -camera.ownDeviceNodes
            out += "  unplug check: cannot tell this camera's device nodes (F_OFD_GETLK on its media devices failed: "
                + "\(String(cString: strerror(errno))), errno \(errno)); any removed V4L2 or media node counts as its unplug\n"
        }
        return out + "\n"
    }

    /// Every V4L2 device `/dev/video*`, as ``listCameras()`` shows them.
    public static func listV4L2Cameras() -> String {
        let nodes = V4L2Device.nodes()
        if nodes.isEmpty {
            return "no V4L2 devices (/dev/video*). USB webcams appear when plugged in; a Pi camera module is listed under libcamera above (see Deploy/CAMERAS.md).\n"
        }
        var out = ""
        for path in nodes {
            let device: V4L2Device
            do throws(CaptureError) {
                device = try V4L2Device(path: path)
            } catch {
                if case .notACaptureDevice = error { continue }  // metadata nodes of the same camera
                out += "\(path): \(error)\n\n"
                continue
            }
            let info = device.info
            out += "\(path): \(info.card) (driver \(info.driver), bus \(info.bus))\n"
            out += "  formats:\n"
            for format in device.formats() {
                let sizes = format.isStepwise && format.sizes.count == 2
                    ? "\(format.sizes[1])...\(format.sizes[0])"
                    : format.sizes.map(\.description).joined(separator: " ")
                let note = format.isEmulated ? " (converted by libv4lconvert)" : format.pixelFormat.isJPEG ? " (saved as is)" : ""
                let rates = format.sizes.compactMap { size in format.fastestRate(at: size).map { "\(size)@\(JSONLine.number($0, decimals: 2))" } }
                out += "    \(format.pixelFormat.fourcc) \(format.description)\(note): \(sizes)\n"
                if !rates.isEmpty { out += "      fastest fps: \(rates.joined(separator: " "))\n" }
            }
            let controls = device.controls()
            out += "  controls:\(controls.isEmpty ? " none" : "")\n"
            for control in controls {
                var line = "    \(control.name) [\(control.kind.rawValue)] \(control.minimum)...\(control.maximum)"
                if control.step > 1 { line += " step \(control.step)" }
                line += " default \(control.defaultValue)"
                if !control.menu.isEmpty { line += " {" + control.menu.map { "\($0.value): \($0.name)" }.joined(separator: ", ") + "}" }
                if !control.isWritable { line += " (read-only or inactive now)" }
                out += line + "\n"
            }
            out += "  serves:\n"
            for line in V4L2ControlAdapter(controls: controls).summary { out += "    \(line)\n" }
            out += "\n"
        }
        return out
    }

    /// For `shutter check`: opens the board's camera (without streaming) and says, per line, which
    /// camera and format it uses and how each board control is served or why it is disabled.
    /// With `simulating`, the simulated camera module is opened in place of the board's camera.
    ///
    /// - Throws: ``CaptureError`` when the camera cannot be opened (no device, busy, permissions, format).
    public static func checkCamera(board: Board, simulating module: SimulatedCameraModule? = nil) throws(CaptureError) -> [String] {
        let camera: any Camera
        var lines: [String]
        if let module {
            camera = try SimulatedCamera(module: module, settings: board.camera)
            lines = ["simulated: \(module.rawValue) (\(module.productName)) through the libcamera backend's fake camera"]
        } else {
            let choice = try CaptureService.chooseCamera(board.camera)
            camera = try CaptureService.openCamera(board.camera, choice: choice)
            lines = choice.reason.map { ["found: \($0)"] } ?? []
        }
        defer { camera.close() }
        let rate = camera.frameInterval.map { $0.rawValue > 0 ? " at \(JSONLine.number(1e9 / Double($0.rawValue), decimals: 2)) fps" : "" } ?? ""
        lines.append("camera: \(camera.info.path) (\(camera.info.card)) \(camera.format)\(rate)\(camera.format.isLimitedRangeYUV ? ", limited-range YUV, converted to full" : "")")
        lines.append(ringReport(settings: board.camera, camera: camera))
        if let camera = (camera as? LibcameraCamera) ?? (camera as? SimulatedCamera)?.libcamera {
            lines[lines.count - 2] += " through libcamera \(libcameraVersions.runtime)"
            if let viewfinder = camera.viewfinder {
                lines.append("viewfinder: \(viewfinder.width)x\(viewfinder.height)")
            } else if let asked = board.camera.viewfinder {
                lines.append("viewfinder: none (\(asked.width)x\(asked.height) asked; the camera's pipeline offers one stream)")
            }
        }
        for report in camera.makeControlAdapter(settings: board.camera).report(board: board) {
            lines.append("control \(report.id): \(report.how)")
        }
        return lines
    }

    /// How many frames the zero-shutter-lag ring holds at the camera's frame size, and what that costs.
    static func ringReport(settings: CameraSettings, camera: any Camera) -> String {
        let perFrame = camera.bytesPerFrame
        let held = ringCapacity(of: camera, settings: settings)
        let mib = { (bytes: Int) in
            bytes >= 1_048_576 ? JSONLine.number(Double(bytes) / 1_048_576, decimals: 1) + " MiB" : "\((bytes + 1023) / 1024) KiB"
        }
        let libcameraBudget = camera is LibcameraCamera ? settings.cmaMiB : nil
        let cap = (settings.ringMiB.map { ", ringMiB \($0)" } ?? "") + (libcameraBudget.map { ", cmaMiB \($0)" } ?? "")
        var line = "ring: \(held) frame\(held == 1 ? "" : "s") of \(mib(perFrame)) (\(mib(held * perFrame)); ringFrames \(settings.ringFrames)\(cap))"
        if held < settings.ringFrames {
            let limits = [settings.ringMiB.map { _ in "ringMiB" }, libcameraBudget.map { _ in "cmaMiB" }].compactMap { $0 }.joined(separator: " or ")
            line += ": \(limits.isEmpty ? "the camera" : limits) holds fewer than ringFrames at this size"
        }
        if let v4l2 = camera as? V4L2Camera {
            line += ", \(v4l2.bufferCount) driver buffers (\(mib(v4l2.bufferCount * perFrame)) mapped)"
            if !v4l2.lendsBuffers { line += "; frames are copied (libcamerify's layer needs its buffers back in turn)" }
        } else if let libcamera = (camera as? LibcameraCamera) ?? (camera as? SimulatedCamera)?.libcamera {
            line += ", \(libcamera.requestCount) requests (\(mib(libcamera.requestCount * perFrame)) of camera buffers)"
        }
        return line
    }

    /// Takes one still now with the board's camera and returns its `photo` event.
    ///
    /// - Parameters:
    ///   - board: the rig; its camera and output settings are used.
    ///   - out: the photo's path (an existing file is not overwritten: `-2` is added); `nil` uses
    ///     the board's output directory and name template.
    ///   - timeout: how long to wait for the camera.
    ///   - module: the simulated camera module to take it with in place of the board's camera.
    /// - Throws: ``CaptureError`` when the camera cannot be opened or the photo cannot be saved.
    public static func captureOnce(board: Board, out: String? = nil, timeout: Nanoseconds = .seconds(10),
                                   simulating module: SimulatedCameraModule? = nil) throws(CaptureError) -> JSONLine {
        var board = board
        if let out {
            let slash = out.lastIndex(of: "/")
            board.output.directory = slash.map { String(out[..<$0]) }.flatMap { $0.isEmpty ? "/" : $0 } ?? "."
            board.output.template = slash.map { String(out[out.index(after: $0)...]) } ?? out
            board.output.template = board.output.template.replacing("%", with: "%%")
        }
        var settings = board.camera
        settings.keepStreaming = true
        board.camera = settings
        let service = try CaptureService(board: board, factory: module?.factory(), updatesLatest: out == nil)
        defer { service.shutdown() }
        let deadline = monotonicNow() + timeout
        var pressed = false
        // A cold camera: let auto-exposure settle over the warm-up frames, then press.
        let warmup = max(1, board.camera.warmupFrames)
        while monotonicNow() < deadline {
            var fds = service.pollDescriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            _ = poll(&fds, nfds_t(fds.count), 100)
            for event in service.handleReadable() {
                switch event {
                case .photo: return event.json
                case .captureFailed(let failure): throw failure.error
                case .cameraReady, .focusMode: break
                }
            }
            if !pressed, service.framesReceived >= warmup {
                let now = monotonicNow()
                service.capture(Shot(pressedAt: now), now: now)
                pressed = true
            }
        }
        throw CaptureError.timeout(device: board.camera.deviceDescription, seconds: timeout.milliseconds / 1000)
    }
}
