#ifndef SHUTTER_LIBCAMERA_H
#define SHUTTER_LIBCAMERA_H
// One stable C interface over libcamera's C++ API: Debian 12's 0.0.3 and the newer API of
// Debian trixie / Raspberry Pi OS (CLibcameraBackend's backend.cpp picks with #if on
// <libcamera/version.h>). Swift only ever sees this file, through CLibcameraLoader, whose
// loader.c forwards each function to the plugin CLibcameraBackend is built into (shutter_lc_load
// must have succeeded first; see shutter_libcamera_loader.h). A fake camera (shutter_lc_open_fake,
// fake.cpp) sits behind the same functions, so the Swift side is tested through its real code
// path without hardware.
// Functions that fail return NULL or a negative errno (-ENODEV, -EBUSY, ...).

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The libcamera version the backend was compiled against, "0.0.3" or "0.5.0".
const char *shutter_lc_header_version(void);
/// The libcamera version loaded at run time (CameraManager::version()).
const char *shutter_lc_runtime_version(void);

/// One camera libcamera lists.
typedef struct {
    char id[256];       // libcamera's id: "/base/soc/i2c0mux/i2c@1/imx708@1a", "platform/vimc.0 Sensor B"
    char model[64];     // properties::Model: "imx708", "Sensor B"; empty when unknown
} shutter_lc_camera_entry;

/// Whether shutter set LIBCAMERA_LOG_LEVELS itself (to "*:ERROR", when the process was
/// started without it), once, as the executable started: before any thread could read the
/// environment. Defined by the loader, so it needs no plugin. Programs the process starts (hooks) should not inherit it then.
int shutter_lc_log_levels_set_by_shutter(void);

/// Fills up to `capacity` entries; returns how many cameras libcamera lists (may exceed
/// `capacity`), or a negative errno when the camera manager cannot start: -EALREADY under
/// libcamerify, whose layer runs the process's one camera manager itself.
int shutter_lc_list(shutter_lc_camera_entry *entries, int capacity);

typedef struct shutter_lc_camera shutter_lc_camera;

/// A watch on the cameras libcamera adds: hot-plugged, or listed by a camera manager as it
/// starts (CameraManager::cameraAdded), for a loop waiting for its camera.
typedef struct shutter_lc_watch shutter_lc_watch;
/// Starts a watch that calls `wake(context)` each time libcamera adds a camera, on libcamera's
/// thread (where a handler must not block: `wake` only asks a loop to look). Does not start the
/// camera manager: the one the last list or open started (kept while cameras come and go) is the
/// one watched. NULL when out of memory.
shutter_lc_watch *shutter_lc_watch_cameras(void (*wake)(void *context), void *context);
/// How many cameras were added since the watch started or this was last called.
int shutter_lc_watch_take(shutter_lc_watch *watch);
/// Ends the watch: once it returns, `wake` is not called any more. NULL is ignored.
void shutter_lc_watch_close(shutter_lc_watch *watch);

/// Opens and acquires the camera whose id equals `name`, or whose model equals it (ignoring
/// case), or the first camera when `name` is empty. NULL and *error = -ENOENT (no such
/// camera), -EBUSY (another process holds it), -EALREADY (under libcamerify, as for
/// `shutter_lc_list`), or another negative errno.
shutter_lc_camera *shutter_lc_open(const char *name, int *error);

/// The fake camera's script: what it offers and how its autofocus behaves.
typedef struct {
    uint32_t width, height;     // the one size it offers
    uint32_t fourcc;            // DRM fourcc of its one format (NV12, YUV420, RGB888, BGR888)
    int has_scaler_crop;        // offers ScalerCrop (the full sensor is width x height)
    int has_exposure_value;     // offers ExposureValue -8...8
    int has_autofocus;          // offers AfMode, AfTrigger, LensPosition 0...15, reports AfState
    /// After an AfTrigger start, the frames reporting Scanning before the outcome.
    int af_scan_frames;
    /// The outcome: SHUTTER_LC_AF_FOCUSED, SHUTTER_LC_AF_FAILED, or SHUTTER_LC_AF_SCANNING (never ends).
    int af_outcome;
    /// Offers FrameDurationLimits with this range in microseconds (0, 0: no such control).
    int64_t frame_duration_min_us, frame_duration_max_us;
    /// Bytes left unused between one still plane and the next (0: planes back to back, as
    /// shutter's frame layout has them), to test cameras whose planes lie apart.
    uint32_t plane_gap;
    /// Behave as libcamera's Raspberry Pi pipeline handler and IPA do (pipeline/rpi/common,
    /// ipa/rpi/common; each behaviour is cited in fake.cpp's FakeCamera): placeholder control
    /// ranges and no ScalerCropMaximum until configure; sizes offered as a range, the sensor's
    /// full size (width x height) by default; SensorTimestamp at the start of readout, with
    /// ExposureTime, AnalogueGain, DigitalGain, ColourTemperature and FrameDuration in the
    /// metadata; an ExposureValue taking effect `control_delay` frames after the request that
    /// carried it, then easing in over about ten frames as the AGC filters its exposure, and
    /// FrameDurationLimits `frame_duration_delay` frames after (controls given to start apply from
    /// the first frame); an AfTrigger start ignored while a scan is under way; continuous
    /// autofocus scanning again after a scene change (shutter_lc_fake_scene_change); YUV420
    /// rows 64-byte aligned (wider than the image when its width is not a multiple of 128), its
    /// three planes back to back in one buffer.
    int raspberrypi;
    /// With raspberrypi: the ExposureTime each frame reports until an ExposureValue change moves
    /// the exposure, in microseconds (default 20000), at an AnalogueGain of 2.
    int32_t exposure_time_us;
    /// With raspberrypi: frames between a request and the first frame its ExposureValue shows in
    /// (DelayedControls; imx708's exposure delay is 2).
    int control_delay;
    /// With raspberrypi: frames between a request and the first frame as long as its
    /// FrameDurationLimits ask (DelayedControls; imx708's and imx477's VBLANK delay is 3).
    int frame_duration_delay;
    /// A libcamera id and properties::Model to report instead of the fake's own (empty: keep
    /// them): a simulated camera module says it is an imx708 at its device-tree path.
    char id[128];
    char model[32];
    /// Deliveries leave the planes (still and viewfinder) as they are rather than filling them
    /// (the simulator paints a picture into every request's buffers once: frames then cost no copy).
    int keeps_planes;
    /// With raspberrypi, a Raspberry Pi 4: the contiguous memory (CMA) left for the camera, in
    /// bytes (0: no limit). Allocations beyond it fail with -ENOMEM, as the kernel's CMA
    /// allocations do: the requests' buffers at configure (FrameBufferAllocator::allocate), the
    /// vc4 pipeline's own raw and ISP buffers at the first start (see FakeCamera).
    uint64_t cma_budget;
    /// Still planes in buffers of their own (a multi-planar V4L2 format, such as YUV420M),
    /// rather than one buffer holding them all.
    int separate_planes;
    /// With raspberrypi: the frames the IPA withholds after the camera's first start while AGC
    /// and AWB converge (IpaBase::start's startupFrameCount: 7 with the default tuning), completed
    /// as FrameStartup (libcamera 0.5.1 and later; dropped inside the pipeline before); none
    /// after a later start.
    int startup_frames;
} shutter_lc_fake_config;

/// A fake camera behind the same interface: no thread, no hardware. Frames arrive only when
/// the test calls shutter_lc_fake_deliver.
shutter_lc_camera *shutter_lc_open_fake(const shutter_lc_fake_config *config);

/// Completes the oldest queued request of a started fake camera as a frame stamped
/// `timestamp_ns`: applies that request's controls, fills every plane with `fill` (unless
/// keeps_planes), advances
/// the autofocus script, and makes the poll descriptor readable. -EAGAIN when no request is
/// queued (every buffer is held), -EINVAL for a real camera.
int shutter_lc_fake_deliver(shutter_lc_camera *camera, int64_t timestamp_ns, uint8_t fill);
/// A timestamp for shutter_lc_fake_deliver: the raspberrypi personality's sensor stamps the frame
/// itself, its previous frame's timestamp plus that frame's FrameDuration. -EINVAL before the
/// first frame since start, or without the raspberrypi personality.
#define SHUTTER_LC_FAKE_AT_CADENCE (-1)
/// Puts FrameDurationLimits, both limits at `frame_duration_us`, on the next request queued, as
/// an application that changes the frame rate while streaming would (shutter gives it only to
/// Camera::start: shutter_lc_set_frame_rate). 0, -ENOTSUP when the fake offers no
/// FrameDurationLimits, -EINVAL for a real camera.
int shutter_lc_fake_request_frame_duration(shutter_lc_camera *camera, int64_t frame_duration_us);
/// The value the fake camera last applied for control `control` (SHUTTER_LC_CONTROL_*) as a
/// float (ScalerCrop: see shutter_lc_fake_scaler_crop). -ENOENT if never set.
int shutter_lc_fake_applied(shutter_lc_camera *camera, int control, float *value);
/// The ScalerCrop rectangle the fake last applied. -ENOENT if never set.
int shutter_lc_fake_scaler_crop(shutter_lc_camera *camera, int32_t *x, int32_t *y, uint32_t *width, uint32_t *height);
/// How many times the fake saw AfTrigger start.
int shutter_lc_fake_af_triggers(shutter_lc_camera *camera);
/// The controls the fake applied from its last start (Camera::start's ControlList), as a count
/// of the controls given; -EINVAL for a real camera.
int shutter_lc_fake_start_controls(shutter_lc_camera *camera);

/// The DMA_BUF_IOCTL_SYNC calls the fake saw on each buffer of request `request` (its still
/// planes' buffers, then the viewfinder's): DMA_BUF_SYNC_START ones in `starts`, DMA_BUF_SYNC_END
/// ones in `ends`. Returns the request's buffer count (may exceed capacity), -ENOENT for a request
/// that does not exist, -EINVAL for a real camera.
int shutter_lc_fake_buffer_syncs(shutter_lc_camera *camera, int request, int *starts, int *ends, int capacity);
/// The scene in front of the fake camera changes from the next frame delivered on: with the
/// raspberrypi personality under continuous autofocus, the autofocus scans again as the Raspberry
/// Pi IPA's does (see FakeCaf in fake.cpp); nothing else notices. -EINVAL for a real camera.
int shutter_lc_fake_scene_change(shutter_lc_camera *camera);

/// A fake system for tests, in place of libcamera's cameras: once installed, shutter_lc_list,
/// shutter_lc_open and the camera manager behind them are the fake's. Its camera manager behaves
/// as libcamera's does for hot-plug (see FakeManager in fake.cpp), and counts what tests check
/// of the managers (shutter_lc_fake_system_stats). 0, or -EBUSY while a camera is open.
int shutter_lc_fake_system_install(void);
/// Back to libcamera's own cameras, once no fake camera is open and no fake manager runs.
void shutter_lc_fake_system_remove(void);
/// Plugs in a fake camera with libcamera id `id` (model "fake") behaving as `config` says: a
/// camera manager running now registers it (hot-plug), unless it still has a camera with that id
/// registered (never saw it go): libcamera aborts the process then, the fake counts it
/// (duplicate_ids). -EEXIST when one with that id is plugged in.
int shutter_lc_fake_system_plug(const char *id, const shutter_lc_fake_config *config);
/// Unplugs the fake camera `id`: an open camera with that id fails from its next read on
/// (-ENODEV). With `noticed` the running manager unregisters it (cameraRemoved, as libcamera's
/// uvcvideo pipeline does); without, it keeps it registered, a stale camera (as its vimc pipeline
/// does: it never calls hotplugMediaDevice). -ENOENT when none is plugged in.
int shutter_lc_fake_system_unplug(const char *id, int noticed);

/// What the fake system saw of camera managers since it was installed.
typedef struct {
    int managers_created;   // camera managers made (each started once)
    int managers_rebuilt;   // of which made to replace one that kept a stale camera
    int manager_threads;    // distinct threads that ran camera manager calls: create, start,
                            // list, get, acquire, release, stop, destroy
    int duplicate_ids;      // cameras a manager was asked to register twice (libcamera aborts)
    int cameras_added;      // cameras registered (cameraAdded), at start or hot-plugged
} shutter_lc_manager_stats;
void shutter_lc_fake_system_stats(shutter_lc_manager_stats *out);

/// Releases and closes the camera (stopping it first). NULL is ignored. Buffers retained with
/// shutter_lc_buffers_retain stay mapped (and readable) until released.
void shutter_lc_close(shutter_lc_camera *camera);

/// The camera's libcamera id and model; valid until closed.
const char *shutter_lc_id(shutter_lc_camera *camera);
const char *shutter_lc_model(shutter_lc_camera *camera);

/// A stream's format as libcamera offers it.
typedef struct {
    uint32_t fourcc;            // DRM fourcc (libcamera::PixelFormat::fourcc())
    char name[32];              // libcamera's name: "NV12", "RGB888"
    uint32_t size_count;        // sizes below, largest first
} shutter_lc_format;

/// The formats the still-capture role offers. Returns the count (may exceed capacity) or a negative errno.
int shutter_lc_formats(shutter_lc_camera *camera, shutter_lc_format *formats, int capacity);
/// The sizes offered for `fourcc` (largest first): fills widths/heights, returns the count.
int shutter_lc_sizes(shutter_lc_camera *camera, uint32_t fourcc, uint32_t *widths, uint32_t *heights, int capacity);

/// The controls shutter maps, with stable numbers of its own (libcamera's numeric ids change
/// between versions).
enum {
    SHUTTER_LC_CONTROL_OTHER = 0,
    SHUTTER_LC_CONTROL_SCALER_CROP = 1,
    SHUTTER_LC_CONTROL_EXPOSURE_VALUE = 2,
    SHUTTER_LC_CONTROL_AF_MODE = 3,
    SHUTTER_LC_CONTROL_AF_TRIGGER = 4,
    SHUTTER_LC_CONTROL_LENS_POSITION = 5,
    SHUTTER_LC_CONTROL_AE_ENABLE = 6,
    SHUTTER_LC_CONTROL_BRIGHTNESS = 7,
    SHUTTER_LC_CONTROL_CONTRAST = 8,
    SHUTTER_LC_CONTROL_SATURATION = 9,
    SHUTTER_LC_CONTROL_FRAME_DURATION_LIMITS = 10,
};

/// AfState values (libcamera's AfStateEnum, the same in every version so far).
enum {
    SHUTTER_LC_AF_IDLE = 0,
    SHUTTER_LC_AF_SCANNING = 1,
    SHUTTER_LC_AF_FOCUSED = 2,
    SHUTTER_LC_AF_FAILED = 3,
};

/// Value types of controls.
enum {
    SHUTTER_LC_TYPE_BOOL = 1,
    SHUTTER_LC_TYPE_INT = 2,    // int32 and int64
    SHUTTER_LC_TYPE_FLOAT = 3,
    SHUTTER_LC_TYPE_RECTANGLE = 4,
    SHUTTER_LC_TYPE_OTHER = 5,
};

/// One control the camera offers, with its range (rectangles: min/max are unused, see
/// shutter_lc_scaler_crop_maximum).
typedef struct {
    uint32_t libcamera_id;      // libcamera's numeric id (for listing only)
    int control;                // SHUTTER_LC_CONTROL_*
    int type;                   // SHUTTER_LC_TYPE_*
    char name[64];              // "ExposureValue", "AfMode"
    double minimum, maximum, default_value;
} shutter_lc_control_info;

/// The controls the camera offers. Returns the count (may exceed capacity). The ranges are the
/// configured mode's only after shutter_lc_configure: pipelines state placeholders before
/// (the Raspberry Pi IPA: FrameDurationLimits, LensPosition 0...32, ScalerCrop 65535).
int shutter_lc_controls(shutter_lc_camera *camera, shutter_lc_control_info *controls, int capacity);

/// The rectangle ScalerCrop may cover at most (the sensor's area of the configured mode, in
/// sensor pixels): properties::ScalerCropMaximum, else the control's maximum unless that is a
/// placeholder. Valid after shutter_lc_configure only: before it the Raspberry Pi pipeline states
/// a placeholder (65535, 65535)/65535x65535 and an empty property. 0, -ENOTSUP when the camera
/// has no ScalerCrop, -EAGAIN when it states no real maximum (not configured yet).
int shutter_lc_scaler_crop_maximum(shutter_lc_camera *camera, int32_t *x, int32_t *y, uint32_t *width, uint32_t *height);

/// The crop the pipeline takes unzoomed, in sensor pixels: ScalerCrop's default as the configured
/// camera states it (libcamera 0.1 and later), else the crop the first frame since configure
/// reported in its metadata while shutter had set none (0.0.3). Unlike the maximum, the
/// Raspberry Pi pipeline fits it to the still's aspect: a zoom centred in it keeps the picture's
/// shape. 0, -ENOTSUP without ScalerCrop, -EAGAIN when neither is known yet.
int shutter_lc_scaler_crop_default(shutter_lc_camera *camera, int32_t *x, int32_t *y, uint32_t *width, uint32_t *height);

/// How many device nodes (its media devices and the video and subdevice nodes in their graphs)
/// the backend knows as the camera's own: before it stops a camera it looks whether one of them
/// was removed (a device gone without libcamera noticing). They are the media devices the
/// camera's acquire locked, asked of the kernel (F_OFD_GETLK), not of /proc/locks. A negative
/// errno when the kernel could not say who holds the locks, 0 when no node was found (the fake
/// camera, or a pipeline that locks none): then any removed V4L2 or media node counts.
int shutter_lc_device_nodes(shutter_lc_camera *camera);

/// The pid of the process holding a POSIX lock on the file `fd` opens (this process's own
/// included), 0 when none does, a negative errno when the kernel cannot say: how the backend
/// tells the media devices a camera's acquire locked.
int shutter_lc_lock_holder(int fd);

/// One stream shutter asks for; the backend writes back what libcamera granted.
typedef struct {
    uint32_t fourcc;            // 0 lets the backend keep libcamera's default for the role
    uint32_t width, height;     // 0 keeps the default
    uint32_t stride;            // out: bytes per row of the first plane
    uint32_t frame_size;        // out: bytes of one frame (all planes)
    int adjusted;               // out: libcamera changed what was asked
} shutter_lc_stream_config;

/// Configures a still stream and optionally a smaller viewfinder stream (NULL: none), allocates
/// buffers (`buffer_count` requests, at least 2) and maps them. Call before start. 0 or a negative errno.
int shutter_lc_configure(shutter_lc_camera *camera, shutter_lc_stream_config *still,
                         shutter_lc_stream_config *viewfinder, int buffer_count);

/// Asks for `fps` frames per second from the next start on: FrameDurationLimits with both
/// limits at 1/fps, clamped to the range the camera states. Writes the frame duration asked
/// for (ns) to `frame_duration_ns`. 0, or -ENOTSUP when the camera has no FrameDurationLimits
/// (vimc, most UVC cameras), -EINVAL for a rate that is not positive.
int shutter_lc_set_frame_rate(shutter_lc_camera *camera, double fps, int64_t *frame_duration_ns);

/// Starts the camera and queues every request shutter does not hold (see shutter_lc_next);
/// held requests are queued as shutter_lc_release hands them back. Controls set since the last
/// request was queued go to Camera::start() itself, so they apply from the first frame instead
/// of waiting behind every request queued at start. 0 or a negative errno.
int shutter_lc_start(shutter_lc_camera *camera);
/// Stops the camera; completed requests not yet taken are dropped (queued again by the next
/// start); held ones stay held.
void shutter_lc_stop(shutter_lc_camera *camera);

/// A descriptor that is readable while completed requests wait (an eventfd).
int shutter_lc_poll_fd(shutter_lc_camera *camera);

/// One completed request.
typedef struct {
    int request;                // pass to shutter_lc_release
    int ok;                     // 0: cancelled or failed (its buffer must not be used)
    uint32_t sequence;          // the still buffer's frame sequence
    int64_t sensor_timestamp;   // controls::SensorTimestamp, ns; 0 when not reported
    int64_t buffer_timestamp;   // FrameMetadata::timestamp, ns
    int64_t completed_at;       // CLOCK_MONOTONIC when libcamera completed the request (its
                                // requestCompleted signal), ns
    int af_state;               // SHUTTER_LC_AF_*, or -1 when not reported
    float lens_position;        // reported LensPosition, or -1
    /// How many AfTrigger starts had been set (shutter_lc_set_int) when this request was queued:
    /// its AfState answers the newest of them. Requests queued earlier report an older cycle.
    uint32_t af_triggers;
    int32_t exposure_time_us;   // controls::ExposureTime, or 0 when not reported
    float analogue_gain;        // controls::AnalogueGain, or 0
    float digital_gain;         // controls::DigitalGain (the ISP's gain on top), or 0
    int32_t colour_temperature; // controls::ColourTemperature (K), or 0
    int64_t frame_duration_us;  // controls::FrameDuration (the sensor's frame length), or 0
    /// How many ExposureValue changes had been set (shutter_lc_set_float) when this request was
    /// queued: its exposure answers the newest of them. Requests queued earlier show an older bias.
    uint32_t exposure_value_sets;
    const uint8_t *planes[3];   // the still stream's mapped planes (NULL beyond plane_count)
    uint32_t plane_bytes[3];
    uint32_t plane_count;
    const uint8_t *viewfinder;  // the viewfinder stream's first plane, or NULL
    uint32_t viewfinder_bytes;
} shutter_lc_completed;

/// Takes the oldest completed request, which shutter then holds: 1 (filled `out`), 0 (none
/// waiting), or a negative errno (-ENODEV: the camera was disconnected). Its planes stay mapped
/// and unchanged until released: a held request is never queued, not even by a new start.
int shutter_lc_next(shutter_lc_camera *camera, shutter_lc_completed *out);
/// Hands a held request back: queued again (with the controls set since) while started, else
/// by the next start. 0 or a negative errno.
int shutter_lc_release(shutter_lc_camera *camera, int request);

/// The configured requests' buffer memory, mapped until the last reference is released: frames
/// lent from it may outlive the camera (a photo still encoding after a close or an unplug).
typedef struct shutter_lc_buffers shutter_lc_buffers;

/// A reference to the buffers of the current configuration; NULL before configure. Release
/// with shutter_lc_buffers_release (closing the camera does not).
shutter_lc_buffers *shutter_lc_buffers_retain(shutter_lc_camera *camera);
void shutter_lc_buffers_release(shutter_lc_buffers *buffers);
/// How many requests there are (request numbers are 0 ..< count).
int shutter_lc_buffers_count(const shutter_lc_buffers *buffers);
/// Request `request`'s still planes, as shutter_lc_next gives them (full lengths). Returns the
/// plane count, or -EINVAL for a request that does not exist.
int shutter_lc_buffers_planes(const shutter_lc_buffers *buffers, int request, const uint8_t **planes, uint32_t *bytes, int capacity);

/// Sets controls on the next request queued (libcamera applies per request), or on the next
/// start. 0 or -ENOTSUP when the camera lacks the control.
int shutter_lc_set_float(shutter_lc_camera *camera, int control, float value);
int shutter_lc_set_int(shutter_lc_camera *camera, int control, int32_t value);
/// Sets the control named `name` (ignoring case: "Brightness") for a board binding.
int shutter_lc_set_named(shutter_lc_camera *camera, const char *name, double value);
int shutter_lc_set_scaler_crop(shutter_lc_camera *camera, int32_t x, int32_t y, uint32_t width, uint32_t height);

#ifdef __cplusplus
}
#endif
#endif
