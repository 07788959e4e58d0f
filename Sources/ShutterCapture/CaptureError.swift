import ShutterCore
import ShutterSystem
#if canImport(Glibc)
import Glibc
#endif

/// Why the camera, the encoder or the photo file failed: what, where, and the errno when there is one.
///
/// Every runtime failure in the capture module is one of these; the service turns them into
/// `captureFailed` events and keeps running.
public enum CaptureError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The board names a camera that is not there (`requested` `nil`: it names none and none was
    /// found); `available` lists what is (`/dev/video0 (vivid)`); `backend` is where it was looked for.
    case noDevice(requested: String?, available: [String], backend: CameraBackend = .v4l2)
    /// Another program holds the camera (EBUSY).
    case deviceBusy(device: String)
    /// The camera node cannot be opened by this user (EACCES/EPERM).
    case permissionDenied(device: String)
    /// The camera does not offer the format; `supported` lists the fourccs it does.
    case unsupportedFormat(device: String, requested: String, supported: [String])
    /// The camera does not offer the size in the chosen format; `supported` lists `WxH`.
    case unsupportedSize(device: String, requested: String, supported: [String])
    /// The device went away mid-stream (ENODEV, USB unplug).
    case deviceVanished(device: String)
    /// The device is not a video capture device that can stream.
    case notACaptureDevice(device: String, reason: String)
    /// The board's `camera.ringMiB` holds fewer than two frames of `frameBytes` (the ring needs two).
    case ringTooSmall(device: String, ringMiB: Int, frameBytes: Int)
    /// The camera's buffers could not be allocated (ENOMEM from libcamera's buffer allocation or
    /// its start, where a Raspberry Pi pipeline allocates its own): the contiguous memory (CMA) they
    /// come from is short. `requests` of `requestBytes` each were asked for; `cmaMiB` is the board's budget.
    case cameraMemory(device: String, call: String, requests: Int, requestBytes: Int, cmaMiB: Int?)
    /// The board's `camera.cmaMiB` holds fewer than four requests of `requestBytes` (two queued, two in the ring).
    case cmaTooSmall(device: String, cmaMiB: Int, requestBytes: Int)
    /// A system call failed: the call (`VIDIOC_DQBUF`, `write`), errno and the object (device path, file).
    case system(call: String, errno: CInt, context: String)
    /// The JPEG encoder refused the frame.
    case encoding(String)
    /// The camera produced no frame in time.
    case timeout(device: String, seconds: Double)
    /// The camera is not running (not yet reopened after a failure).
    case notReady(reason: String)
    /// The stream stopped sending frames without an error; shutter restarts it.
    case stalled(device: String, seconds: Double)
    /// The camera's start has not finished after the board's `camera.startTimeoutMs`; it is still waited for.
    case startTimedOut(device: String, seconds: Double)
    /// A photo's name would leave the output directory or hide in it (`..`, an absolute path, a
    /// leading dot, more than one folder deep); nothing was written.
    case badPhotoName(name: String, reason: String)
    /// A rig's shot came after the ring let go of the frame exposing at its instant; the oldest
    /// frame held began `oldestHeldAfter` past it (``CaptureStateMachine/Failure/instantNotHeld(oldestHeldAfter:)``).
    case instantNotHeld(oldestHeldAfter: Nanoseconds)
    /// `limit` rig shots wait for their frames already (``CaptureStateMachine/rigShotLimit``).
    case rigShotBacklog(limit: Int)
    /// The libcamera backend cannot be loaded (``loadLibcamera()``): the plugin is not where it is
    /// looked for, or libcamera itself is missing; `reason` names the files and `dlerror`'s text.
    case libcameraUnavailable(reason: String)

    /// The errno behind the failure, when there is one.
    public var errno: CInt? {
        switch self {
        case .system(_, let errno, _): errno
        case .deviceBusy: EBUSY
        case .permissionDenied: EACCES
        case .deviceVanished: ENODEV
        case .cameraMemory: ENOMEM
        default: nil
        }
    }

    /// Whether a rig's shot failed so because this node could not take its instant (too late
    /// for the ring, too many shots waiting): the shot is missed, as one refused on arrival, and
    /// the camera did not fail.
    public var missesTheShot: Bool {
        switch self {
        case .instantNotHeld, .rigShotBacklog: true
        default: false
        }
    }

    /// A short machine-readable kind for events: `noDevice`, `deviceBusy`, `diskFull`, ...
    public var kind: String {
        switch self {
        case .noDevice: "noDevice"
        case .deviceBusy: "deviceBusy"
        case .permissionDenied: "permissionDenied"
        case .unsupportedFormat: "unsupportedFormat"
        case .unsupportedSize: "unsupportedSize"
        case .deviceVanished: "deviceVanished"
        case .notACaptureDevice: "notACaptureDevice"
        case .ringTooSmall: "ringTooSmall"
        case .cameraMemory: "cameraMemory"
        case .cmaTooSmall: "cmaTooSmall"
        case .system(_, let errno, _) where errno == ENOSPC || errno == EDQUOT: "diskFull"
        case .system: "systemError"
        case .encoding: "encodingFailed"
        case .timeout: "timeout"
        case .notReady: "notReady"
        case .stalled, .startTimedOut: "stalled"
        case .instantNotHeld: "instantNotHeld"
        case .rigShotBacklog: "rigShotBacklog"
        case .badPhotoName: "badPhotoName"
        case .libcameraUnavailable: "libcameraUnavailable"
        }
    }

    public var description: String {
        switch self {
        case .noDevice(let requested, let available, let backend):
            let none = switch backend {
            case .v4l2: "no V4L2 capture devices exist"
            case .libcamera: "libcamera lists no cameras"
            case .auto: "libcamera lists no cameras and no V4L2 capture devices exist"
            }
            let others = available.joined(separator: ", ")
            let list = available.isEmpty ? none : backend == .auto ? "libcamera lists no such camera; the V4L2 cameras are: " + others
                : "the cameras are: " + others
            guard let requested else {
                let looked = backend == .auto ? "the first libcamera camera, else the first V4L2 capture device" : "backend '\(backend.rawValue)'"
                return "no camera found (the board names none; \(looked)): \(list)"
            }
            return "no camera '\(requested)'\(backend == .libcamera ? " in libcamera" : ""): \(list)"
        case .deviceBusy(let device):
            return "\(device) is busy: another program is streaming from it (find it with 'fuser \(device)')"
        case .permissionDenied(let device):
            return "\(device): permission denied; add the user to the 'video' group (sudo usermod -aG video $USER) and log in again"
        case .unsupportedFormat(let device, let requested, let supported):
            return "\(device) does not offer pixel format '\(requested)'; it offers \(supported.joined(separator: ", "))"
        case .unsupportedSize(let device, let requested, let supported):
            return "\(device) does not offer \(requested); it offers \(supported.joined(separator: ", "))"
        case .deviceVanished(let device):
            return "\(device) went away (unplugged?); shutter reopens it when it comes back"
        case .notACaptureDevice(let device, let reason):
            return "\(device) cannot be used: \(reason)"
        case .ringTooSmall(let device, let ringMiB, let frameBytes):
            let least = (2 * frameBytes + 1_048_575) / 1_048_576
            return "\(device): camera.ringMiB \(ringMiB) holds fewer than 2 frames of \(JSONLine.number(Double(frameBytes) / 1_048_576, decimals: 1)) MiB "
                + "(the zero-shutter-lag ring needs 2): set ringMiB to at least \(least), remove it, or ask for a smaller size"
        case .cameraMemory(let device, let call, let requests, let requestBytes, let cmaMiB):
            let each = JSONLine.number(Double(requestBytes) / 1_048_576, decimals: 1)
            let all = JSONLine.number(Double(requests * requestBytes) / 1_048_576, decimals: 1)
            let budget = cmaMiB.map { "lower camera.cmaMiB (\($0) now)" } ?? "set camera.cmaMiB (the Raspberry Pi 4 board's is 96)"
            return "\(device): \(call) failed: out of contiguous memory (CMA, ENOMEM) for \(requests) requests of \(each) MiB (\(all) MiB) "
                + "and the pipeline's own raw and ISP buffers. Give the camera less: \(budget), lower ringFrames, or ask for a smaller "
                + "still (width/height) or no viewfinder; or give CMA more: 'dtoverlay=vc4-kms-v3d,cma-512' (or 'dtoverlay=cma,cma-512') "
                + "in /boot/firmware/config.txt, then reboot"
        case .cmaTooSmall(let device, let cmaMiB, let requestBytes):
            let least = (4 * requestBytes + 1_048_575) / 1_048_576
            return "\(device): camera.cmaMiB \(cmaMiB) holds fewer than 4 requests of \(JSONLine.number(Double(requestBytes) / 1_048_576, decimals: 1)) MiB "
                + "(two stay queued, two serve the ring): set cmaMiB to at least \(least), or ask for a smaller still or no viewfinder"
        case .system(let call, let errno, let context):
            return "\(context): \(call) failed: \(String(cString: strerror(errno))) (errno \(errno))"
        case .encoding(let message):
            return "JPEG encoding failed: \(message)"
        case .timeout(let device, let seconds):
            return "\(device) sent no frame in \(seconds) s"
        case .notReady(let reason):
            return "the camera is not ready: \(reason)"
        case .stalled(let device, let seconds):
            return "\(device) sent no frame for \(JSONLine.number(seconds, decimals: 1)) s; the stream is restarted"
        case .startTimedOut(let device, let seconds):
            return "\(device) has not started streaming after \(JSONLine.number(seconds, decimals: 1)) s (camera.startTimeoutMs)"
        case .badPhotoName(let name, let reason):
            return "photo name '\(name)' refused: \(reason); a photo is named by a file in the output directory or in one folder below it"
        case .instantNotHeld(let after):
            return "too late for the ring: its oldest frame began \(JSONLine.number(after.milliseconds, decimals: 1)) ms after the shot's instant, "
                + "and the frame exposing at that instant is gone"
        case .rigShotBacklog(let limit):
            return "\(limit) rig shots are waiting for their frames already, the most this node takes beside its own presses"
        case .libcameraUnavailable(let reason):
            return "cannot load the libcamera backend: \(reason) (swift build builds libshutter-libcamera.so beside shutter; "
                + "Deploy/install.sh installs it in /usr/local/lib/shutter)"
        }
    }
}

extension CaptureError {
    /// `call` on `context` failed with `errno`: the system error as ``system(call:errno:context:)``
    /// says it, for a call made through ShutterSystem's `valueOrErrno` or ``FileDescriptor``.
    static func system(_ call: String, _ errno: Errno, _ context: String) -> CaptureError {
        .system(call: call, errno: errno.rawValue, context: context)
    }
}
