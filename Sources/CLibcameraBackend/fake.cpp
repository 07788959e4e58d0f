// The fake libcamera camera behind the C interface in shutter_libcamera.h: no thread, no
// hardware, frames delivered when the caller asks (shutter_lc_fake_deliver); with the
// `raspberrypi` personality it behaves as libcamera's Raspberry Pi pipeline and IPA do, each
// behaviour cited where it is (FakeCamera). And the fake system (shutter_lc_fake_system_install):
// fake cameras plugged in and unplugged behind a fake camera manager. Tests use both, and so does
// `shutter run --simulate` (SimulatedCamera.swift). What it shares with the real backend is
// backend_internal.hpp's.

#include "backend_internal.hpp"

#include <libcamera/version.h>

#include <atomic>
#include <cmath>
#include <map>
#include <tuple>

#include <strings.h>

using namespace libcamera;

namespace shutter_lc {

namespace {

/// The sizes libcamera offers for a format whose sizes are a range (StreamFormats::sizes in
/// src/libcamera/stream.cpp: the entries of its fixed list of common sizes that lie within the
/// range; the list's larger entries). A Raspberry Pi ISP output is such a range, up to the
/// sensor's size: Camera Module 3's 4608x2592 is not on the list, so the largest size listed
/// is 3840x2400.
const Size listed_sizes[] = {
    Size(640, 480), Size(800, 600), Size(1024, 768), Size(1280, 720), Size(1280, 960), Size(1600, 1200),
    Size(1920, 1080), Size(1920, 1200), Size(2048, 1536), Size(2560, 1440), Size(2560, 1600),
    Size(3200, 2400), Size(3840, 2160), Size(3840, 2400), Size(4096, 2160), Size(5120, 2880), Size(7680, 4320),
};

/// The Raspberry Pi AGC as an ExposureValue change meets it, in a scene whose light does not change
/// (src/ipa/rpi/controller/rpi/agc_channel.cpp and ipa_base.cpp at v0.7.1+rpt20260429):
/// - ExposureValue is a multiplier of 2^EV on the AGC's target (IpaBase::applyControls:
///   `agc->setEv(0, pow(2.0, ExposureValue))`), so the target total exposure is the converged
///   one at EV 0 times 2^EV.
/// - Every frame, AgcChannel::filterExposure moves the total exposure a fraction `speed` of the
///   way to the target: `speed` 0.2 (AgcConfig::read's default, which the PiSP tunings of imx708
///   and imx477 keep; vc4's imx708.json sets 0.15), its square root once within 0.8...1.2 of the
///   target, and no move within the `stable_region` of 2%. In the first `startup_frames` (default
///   10) after a start it adapts at once (speed 1, no stable region).
/// - AgcChannel::divideUpExposure splits the total into exposure time and analogue gain along the
///   exposure mode's stages ("normal" of the PiSP imx708.json: shutter 100, 10000, 30000, 50000,
///   66666 µs, gain 1.0, 1.5, 2.0, 4.0, 16.0), the analogue gain at most the sensor's 16, and the
///   rest as digital gain, at most `max_digital_gain` 4.0.
/// Until the first change the frames report the script's exposure time and an analogue gain of 2,
/// the AGC's converged state for the scene (a total the normal mode would divide otherwise).
struct FakeAgc {
    static constexpr double speed = 0.2, stableRegion = 0.02, maxAnalogueGain = 16.0, maxDigitalGain = 4.0;
    static constexpr unsigned startupFrames = 10;
    double base = 0;        // the converged total exposure at EV 0, µs × gain
    double target = 0, filtered = 0;
    unsigned frames = 0;    // frames since the start
    bool divided = false;   // the total has moved since the script's state: report the division
    int32_t exposure_us = 0;
    float analogue = 2.0f, digital = 1.0f;

    void reset(int32_t exposureTime) {
        exposure_us = exposureTime;
        base = target = filtered = double(exposureTime) * 2.0;
    }
    void set_ev(double ev) { target = base * std::pow(2.0, ev); }

    /// One frame's AgcChannel::process, as far as filterExposure and divideUpExposure go.
    void frame() {
        frames++;
        double rate = speed, stable = stableRegion;
        if (frames <= startupFrames) {
            rate = 1.0;
            stable = 0.0;
        }
        if (filtered * (1.0 - stable) < target && filtered * (1.0 + stable) > target) return;
        if (filtered < 1.2 * target && filtered > 0.8 * target) rate = std::sqrt(rate);
        double moved = rate * target + filtered * (1.0 - rate);
        if (moved == filtered) return;  // at the target already (a start-up frame)
        filtered = moved;
        divided = true;
        divide_up();
    }

    void divide_up() {
        static const double shutter[] = { 100, 10000, 30000, 50000, 66666 }, gain[] = { 1.0, 1.5, 2.0, 4.0, 16.0 };
        double exposure = shutter[0], g = gain[0];
        if (exposure * g < filtered) {
            for (size_t stage = 1; stage < sizeof shutter / sizeof shutter[0]; stage++) {
                if (shutter[stage] * g >= filtered) {
                    exposure = filtered / g;
                    break;
                }
                exposure = shutter[stage];
                if (gain[stage] * exposure >= filtered) {
                    g = filtered / exposure;
                    break;
                }
                g = gain[stage];
            }
        }
        double analogueGain = std::min(g, maxAnalogueGain);
        exposure_us = int32_t(exposure + 0.5);
        analogue = float(analogueGain);
        digital = float(std::min(filtered / (analogueGain * exposure), maxDigitalGain));
    }
};

/// Continuous autofocus meeting a change of scene, as the Raspberry Pi IPA's meets one
/// (src/ipa/rpi/controller/rpi/af.cpp at v0.7.1+rpt20260429, Af::doAF in AfModeContinuous, with
/// the "normal" speed of imx708.json's `rpi.af`: dropout_frames 6, retrigger_delay 10,
/// step_frames 5, step_coarse 1, step_fine 0.25, contrast_ratio 0.75):
/// - While phase detection (PDAF) is confident, CAF follows it and does not scan. The new scene
///   is one PDAF cannot measure (its confidence drops below conf_epsilon). Once that has lasted
///   dropout_frames frames, CAF watches the contrast statistics instead, which show a frame's
///   scene one frame late (Af::process stores them for the next frame's prepare): a change from
///   the old scene by more than retrigger_ratio starts a count, and when the scene has held
///   still for retrigger_delay frames of it CAF starts a programmed contrast scan
///   (startProgrammedScan) and reports Scanning from that frame. The frames before still report
///   the old scene's Focused.
/// - The scan (doScan) samples the contrast one lens position at a time, waiting step_frames
///   frames at each position for the statistics first: coarse steps until the contrast falls
///   below contrast_ratio of the best (reversing once when the first sample was the best), then
///   three fine steps, then a settle of step_frames frames before it reports Focused (or Failed).
///   The fake's scenes are the shortest scan that brackets a peak: the sharpest focus where the
///   lens stands, the contrast below contrast_ratio one coarse step either side. Coarse: there,
///   one step back (the contrast drops: reverse, and that position sampled again at once), there
///   again, one step on; fine: three; eight samples, all but the one after the reversal waiting.
/// - doAF looks for a change only outside a scan: one during the scan goes unnoticed (the settle
///   takes the scene as it then is), and so does one while CAF is off.
struct FakeCaf {
    static constexpr unsigned dropoutFrames = 6, retriggerDelay = 10, stepFrames = 5;
    /// The frames that report Scanning: the scan's first, the samples with their waits, the settle.
    static constexpr unsigned scanFrames = 1 + 7 * (stepFrames + 1) + 1 + stepFrames;
    bool watching = false;      // PDAF cannot measure the scene: CAF watches the contrast
    unsigned dropped = 0;       // frames PDAF has been out of this scene since the last scan
    bool unseen = false;        // a change the contrast statistics have not shown yet
    uint32_t changed_at = 0;    // that change's first frame
    unsigned still = 0;         // frames the changed scene has held still (0: no change seen)

    void scene_changed(uint32_t first_frame) {
        watching = unseen = true;
        changed_at = first_frame;
    }

    /// One frame of CAF outside a scan: whether a scan starts with it.
    bool frame(uint32_t sequence) {
        if (!watching || ++dropped < dropoutFrames) return false;
        if (unseen && sequence > changed_at) {
            unseen = false;
            still = 1;
        } else if (still > 0) {
            still++;
        }
        if (still < retriggerDelay) return false;
        still = dropped = 0;
        return true;
    }
};

/// The fake: one format, scripted autofocus, frames delivered by the test.
///
/// With `raspberrypi`, it behaves as libcamera's Raspberry Pi pipeline handler and IPA do
/// (raspberrypi/libcamera, src/libcamera/pipeline/rpi/common and src/ipa/rpi/common):
/// - Until configure, the controls have the IPA's placeholder ranges (ipa_base.cpp's ipaControls
///   and ipaAfControls: ScalerCrop up to Rectangle(65535, 65535, 65535, 65535), FrameDurationLimits
///   33333...120000 µs, LensPosition 0...32), and properties::ScalerCropMaximum is empty
///   (PipelineHandlerBase::registerCamera). IpaBase::configure states the mode's limits
///   (FrameDurationLimits, the lens's LensPosition: imx708.json maps 0...15 dioptres), and
///   PipelineHandlerBase::configure sets ScalerCrop's maximum and ScalerCropMaximum to the mode's
///   analogue crop (imx708: 4608x2592 at (16, 24) in the pixel array).
/// - The pipeline's own crop is the largest rectangle of the still's aspect centred in the mode
///   (pisp.cpp's configure: "Adjust aspect ratio by providing crops on the input image",
///   cfeFormat.size.boundedToAspectRatio(the stream's size); vc4.cpp does the same for its largest
///   output), scaled to sensor pixels (CameraData::scaleIspCrop). ScalerCrop's default states it
///   from 0.1 on (PipelineHandlerBase::configure; 0.0.3's raspberrypi.cpp states none), and every
///   request reports the crop in force as ScalerCrop (CameraData::fillRequestMetadata; 0.0.3's
///   raspberrypi.cpp too). A ScalerCrop set keeps the aspect it is given (applyScalerCrop).
/// - The still stream's sizes are a range (generateConfiguration: ispFormats up to the sensor's
///   size), so StreamFormats::sizes() lists only its fixed sizes; the StillCapture default is
///   YUV420 at the sensor's full size ("Return the largest sensor resolution").
/// - SensorTimestamp is the receiver's buffer timestamp (Unicam, rp1-cfe: the start-of-frame
///   interrupt, the start of readout), and each request reports ExposureTime, AnalogueGain,
///   DigitalGain, ColourTemperature and LensPosition (IpaBase::reportMetadata; DigitalGain from
///   the AGC's status, on every frame).
/// - Sensor controls reach the frames through DelayedControls, each its sensor's delay after the
///   request that carried it (PipelineHandlerBase::registerCamera gives DelayedControls the
///   sensor's delays: camera_sensor_properties.cpp from 0.4 on, the cam helpers' getDelays
///   before): ExposureValue, through the AGC's exposure and gain, `control_delay` frames later
///   (imx708's exposure and gain delays are 2), FrameDurationLimits, through VBLANK,
///   `frame_duration_delay` frames later (imx708's and imx477's VBLANK delay is 3, imx219's 2).
///   That frame is the first as long as the limits ask: it reports the new FrameDuration
///   (IpaBase::reportMetadata, from the frame length DelayedControls says the sensor used), and
///   the next frame's readout starts that much later. Controls given to Camera::start apply from
///   the first frame. ScalerCrop applies to the request's own frame (CameraData::applyScalerCrop,
///   at the ISP).
/// - An ExposureValue change eases in over about ten frames, as the AGC filters its total exposure
///   toward the new target (FakeAgc below, from src/ipa/rpi/controller/rpi/agc_channel.cpp); the
///   frames report the ExposureTime, AnalogueGain and DigitalGain it divides the total into.
/// - Continuous autofocus scans again after a change of scene (shutter_lc_fake_scene_change), for
///   as long as the IPA's scan takes (FakeCaf above), then reports the script's outcome.
/// - Requests already queued when AfTrigger is set report the AfState of the cycle before: the
///   trigger is handled with the request that carries it (IpaBase::applyControls).
/// - YUV420's three planes lie in separate buffers.
/// - With a CMA budget (a Raspberry Pi 4): the requests' buffers come from CMA as configure
///   allocates them (FrameBufferAllocator::allocate → PipelineHandlerBase::exportFrameBuffers →
///   the ISP output's V4L2 buffers), and the first start allocates the vc4 pipeline's own
///   (PipelineHandlerVc4::allocateBuffers, min_unicam_buffers 2 and min_total_unicam_buffers 4
///   by default: 4 raw Unicam buffers of the sensor's mode, CSI-2 packed, at 12 bits (imx477,
///   imx708) 3 bytes per 2 pixels; one ISP Output0 buffer of the still's size; one Output1 buffer
///   of the viewfinder's). Beyond the budget either fails with -ENOMEM, and start fails with it
///   (PipelineHandlerBase::start returns allocateBuffers' error).
struct FakeCamera final : shutter_lc_camera {
    shutter_lc_fake_config script;
    struct Slot {
        std::map<int, float> controls;
        bool crop_set = false;
        Rectangle crop;
        int64_t timestamp = 0;
        uint32_t sequence = 0;
        int af_state = -1;
        float lens = -1;
        uint32_t af_triggers = 0;
        /// The crop in force for the frame, as its metadata reports it (null: not reported).
        Rectangle reported_crop;
        uint32_t exposure_value_sets = 0;
        int32_t exposure_us = 0;
        float analogue_gain = 0, digital_gain = 0;
        /// Completed as FrameStartup: not a picture.
        bool startup = false;
        int64_t frame_duration_us = 0;
    };
    std::vector<Slot> slots;
    RequestFIFO<int> queued, done;
    /// Requests shutter holds (taken by next, not yet released): never queued.
    std::vector<bool> held;
    std::map<int, float> pending, applied;
    bool pending_crop = false, applied_crop_set = false;
    Rectangle pending_crop_rect, applied_crop;
    /// The pipeline's own crop for the configured still (raspberrypi only; see above).
    Rectangle default_crop;
    /// Per request: its buffers (still planes', then the viewfinder's), numbered by their block
    /// in the memory; they stand for dmabuf descriptors in request_fds.
    std::vector<std::vector<int>> request_buffers;
    /// Per buffer: the DMA_BUF_SYNC_START and DMA_BUF_SYNC_END syncs it saw.
    std::map<int, std::pair<int, int>> buffer_syncs;
    bool running = false, configured = false;
    uint32_t sequence = 0;
    int af_state = SHUTTER_LC_AF_IDLE, af_frames_left = 0, af_triggers = 0;
    /// AfTrigger starts set (see shutter_lc_completed::af_triggers).
    uint32_t af_triggers_set = 0;
    /// Frames still to complete as FrameStartup, and whether the camera started before.
    uint32_t startup_left = 0;
    bool started_once = false;
    /// ExposureValue changes set (see shutter_lc_completed::exposure_value_sets).
    uint32_t exposure_value_sets = 0;
    FakeAgc agc;
    FakeCaf caf;
    /// How many controls the last start was given.
    int start_control_count = 0;
    /// The frame durations the IPA allows now, µs (raspberrypi; see limit_frame_durations).
    int64_t frame_limits[2] = {};
    /// The last frame's timestamp and FrameDuration since the start (SHUTTER_LC_FAKE_AT_CADENCE).
    int64_t last_timestamp = 0, last_frame_duration = 0;
    /// Sensor controls on their way through DelayedControls: (the frame sequence they show in, control, value).
    std::vector<std::tuple<uint32_t, int, float>> delayed;
    float lens = 1.0f;
    uint32_t width = 0, height = 0;
    uint32_t stride = 0, frame_size = 0, planes = 1, vf_bytes = 0;
    uint32_t plane_offsets[3] = {}, plane_sizes[3] = {};
    /// CMA the requests' buffers took at configure; whether the pipeline's own are allocated.
    uint64_t cma_requests = 0;
    bool pipeline_buffers = false;

    /// Opened through the fake system's camera manager (shutter_lc_fake_system_install), not
    /// shutter_lc_open_fake: its close releases it there.
    bool through_manager = false;
    /// Its devices went away (shutter_lc_fake_system_unplug, on the test's thread): reads fail with -ENODEV.
    std::atomic<bool> vanished{false};

    explicit FakeCamera(const shutter_lc_fake_config &config) : script(config) {
        id = "fake/shutter-lc-fake";
        model = script.has_autofocus ? "fake-imx708" : "fake";
        if (script.raspberrypi && script.exposure_time_us == 0) script.exposure_time_us = 20000;  // ipa_base.cpp's defaultExposureTime
        if (script.id[0]) id = std::string(script.id, strnlen(script.id, sizeof script.id));
        if (script.model[0]) model = std::string(script.model, strnlen(script.model, sizeof script.model));
        agc.reset(script.exposure_time_us);
        layout(script.width, script.height);
    }

    static uint32_t align64(uint32_t bytes) { return (bytes + 63) & ~63u; }

    /// Plane sizes and offsets for frames of width x height.
    ///
    /// The Raspberry Pi personality pads its rows as the Pi 5's back end does: pisp.cpp's
    /// computeOptimalStride aligns each plane's stride to 64 bytes (libpisp's
    /// compute_optimal_stride, PISP_BACK_END_OUTPUT_MAX_ALIGN) and, for single-planar YUV420,
    /// makes the luma stride twice the chroma stride; the HQ camera's 4056-pixel rows are 4096
    /// bytes apart, imx219's 3280 are 3328. (A Pi 4's bcm2835-isp aligns YUV420 rows to 64
    /// bytes, bcm2835-isp-fmts.h's bytesperline_align: the same strides for these widths.) The
    /// planes lie back to back in one buffer, each `stride x rows` long
    /// (V4L2VideoDevice::createBuffer splits the one V4L2 plane of a single-planar format so,
    /// the chroma stride the luma's halved).
    void layout(uint32_t w, uint32_t h) {
        width = w;
        height = h;
        planes = 1;
        if (script.raspberrypi && script.fourcc == 0x32315559) {  // YUV420
            uint32_t chroma_stride = align64((w + 1) / 2);
            stride = 2 * chroma_stride;
            planes = 3;
            plane_sizes[0] = stride * h;
            plane_sizes[1] = plane_sizes[2] = chroma_stride * ((h + 1) / 2);
            plane_offsets[0] = 0;
            plane_offsets[1] = plane_sizes[0];
            plane_offsets[2] = plane_sizes[0] + plane_sizes[1];
            frame_size = plane_sizes[0] + 2 * plane_sizes[1];
            return;
        }
        switch (script.fourcc) {
        case 0x3231564e:  // NV12
            stride = w;
            planes = 2;
            plane_sizes[0] = w * h;
            plane_sizes[1] = w * ((h + 1) / 2);
            break;
        case 0x32315559:  // YUV420
            stride = w;
            planes = 3;
            plane_sizes[0] = w * h;
            plane_sizes[1] = plane_sizes[2] = (w / 2) * ((h + 1) / 2);
            break;
        default:          // RGB888 / BGR888
            stride = w * 3;
            plane_sizes[0] = stride * h;
        }
        plane_offsets[0] = 0;
        for (uint32_t index = 1; index < planes; index++)
            plane_offsets[index] = plane_offsets[index - 1] + plane_sizes[index - 1] + script.plane_gap;
        frame_size = 0;
        for (uint32_t index = 0; index < planes; index++) frame_size += plane_sizes[index];
    }

    /// The sensor's area, as the mode's analogue crop (imx708's pixel array offset, see above).
    Rectangle sensor_area() const {
        return script.raspberrypi ? Rectangle(16, 24, script.width, script.height) : Rectangle(0, 0, script.width, script.height);
    }

    bool placeholders() const { return script.raspberrypi && !configured; }

    int formats(shutter_lc_format *formats, int capacity) override {
        if (capacity > 0) {
            formats[0].fourcc = script.fourcc;
            copy_string(formats[0].name, sizeof formats[0].name, PixelFormat(script.fourcc).toString());
            formats[0].size_count = uint32_t(offered_sizes().size());
        }
        return 1;
    }

    std::vector<Size> offered_sizes() const {
        if (!script.raspberrypi) return { Size(script.width, script.height) };
        std::vector<Size> list;
        for (const Size &size : listed_sizes)
            if (size.width <= script.width && size.height <= script.height) list.push_back(size);
        return list;
    }

    int sizes(uint32_t fourcc, uint32_t *widths, uint32_t *heights, int capacity) override {
        if (fourcc != script.fourcc) return 0;
        auto list = offered_sizes();
        std::sort(list.begin(), list.end(), [](const Size &a, const Size &b) { return a.width * a.height > b.width * b.height; });
        for (size_t index = 0; index < list.size() && int(index) < capacity; index++) {
            widths[index] = list[index].width;
            heights[index] = list[index].height;
        }
        return int(list.size());
    }

    int control_list(shutter_lc_control_info *out, int capacity) override {
        std::vector<shutter_lc_control_info> list;
        auto add = [&](const ControlId &id, int control, int type, double min, double max, double def) {
            shutter_lc_control_info entry{};
            entry.libcamera_id = id.id();
            entry.control = control;
            entry.type = type;
            copy_string(entry.name, sizeof entry.name, id.name());
            entry.minimum = min;
            entry.maximum = max;
            entry.default_value = def;
            list.push_back(entry);
        };
        add(controls::Brightness, SHUTTER_LC_CONTROL_BRIGHTNESS, SHUTTER_LC_TYPE_FLOAT, -1, 1, 0);
        if (script.has_scaler_crop) add(controls::ScalerCrop, SHUTTER_LC_CONTROL_SCALER_CROP, SHUTTER_LC_TYPE_RECTANGLE, 0, 0, 0);
        if (script.has_exposure_value) add(controls::ExposureValue, SHUTTER_LC_CONTROL_EXPOSURE_VALUE, SHUTTER_LC_TYPE_FLOAT, -8, 8, 0);
        int64_t low = 0, high = 0;
        if (frame_duration_range(low, high))
            add(controls::FrameDurationLimits, SHUTTER_LC_CONTROL_FRAME_DURATION_LIMITS, SHUTTER_LC_TYPE_INT,
                double(low), double(high), double(low));
        if (script.has_autofocus) {
            add(controls::AfMode, SHUTTER_LC_CONTROL_AF_MODE, SHUTTER_LC_TYPE_INT, 0, 2, 0);
            add(controls::AfTrigger, SHUTTER_LC_CONTROL_AF_TRIGGER, SHUTTER_LC_TYPE_INT, 0, 1, 0);
            add(controls::LensPosition, SHUTTER_LC_CONTROL_LENS_POSITION, SHUTTER_LC_TYPE_FLOAT, 0, placeholders() ? 32 : 15, 1);
        }
        for (size_t index = 0; index < list.size() && int(index) < capacity; index++) out[index] = list[index];
        return int(list.size());
    }

    bool scaler_crop_limits(Rectangle &control_maximum, Rectangle &property) override {
        if (!script.has_scaler_crop) return false;
        if (placeholders()) {
            control_maximum = Rectangle(65535, 65535, 65535, 65535);
            property = Rectangle();
        } else {
            control_maximum = property = sensor_area();
        }
        return true;
    }

    int configure(shutter_lc_stream_config *still, shutter_lc_stream_config *viewfinder, int buffer_count) override {
        if (running) return -EBUSY;
        if ((still->fourcc && still->fourcc != script.fourcc)) return -EINVAL;
        uint32_t w = script.width, h = script.height;
        bool adjusted = false;
        if (script.raspberrypi && still->width && still->height) {
            // Any size within the range, even (the ISP's alignment), at most the sensor's.
            w = std::min(still->width, script.width) & ~1u;
            h = std::min(still->height, script.height) & ~1u;
            adjusted = w != still->width || h != still->height;
        } else {
            adjusted = still->width && (still->width != script.width || still->height != script.height);
        }
        layout(w, h);
        configured = true;
        limit_frame_durations(0, 0);
        if (script.raspberrypi) {
            // The fake's mode reads out the whole analogue crop, so ISP and sensor pixels are
            // the same size and scaleIspCrop only moves the crop to the analogue crop's origin.
            Size mode(script.width, script.height);
            Rectangle crop = mode.boundedToAspectRatio(Size(w, h)).centeredTo(Rectangle(mode).center());
            crop.translateBy(sensor_area().topLeft());
            default_crop = crop;
        }
        still->fourcc = script.fourcc;
        still->width = w;
        still->height = h;
        still->stride = stride;
        still->frame_size = frame_size;
        still->adjusted = adjusted;
        // A viewfinder as the Raspberry Pi pipeline gives one: the size asked for (within the
        // still size, even), in the format asked for when the ISP has it (YUV420 or NV12 here;
        // pipeline_base.cpp's validate keeps a format ispFormats() lists), else NV12; with the
        // raspberrypi personality its rows padded as computeOptimalStride pads them (see
        // layout(); NV12's interleaved chroma rows as long as the luma's).
        vf_bytes = 0;
        if (viewfinder && viewfinder->width && viewfinder->height) {
            uint32_t vw = std::min(viewfinder->width, w) & ~1u, vh = std::min(viewfinder->height, h) & ~1u;
            bool planar = viewfinder->fourcc == 0x32315559;  // YUV420
            viewfinder->adjusted = vw != viewfinder->width || vh != viewfinder->height || (viewfinder->fourcc && !planar && viewfinder->fourcc != 0x3231564e);
            viewfinder->fourcc = planar ? 0x32315559 : 0x3231564e;
            viewfinder->width = vw;
            viewfinder->height = vh;
            viewfinder->stride = !script.raspberrypi ? vw : planar ? 2 * align64(vw / 2) : align64(vw);
            uint32_t chroma = planar ? 2 * (viewfinder->stride / 2) * (vh / 2) : viewfinder->stride * (vh / 2);
            viewfinder->frame_size = vf_bytes = viewfinder->stride * vh + chroma;
        } else if (viewfinder) {
            viewfinder->width = viewfinder->height = viewfinder->fourcc = 0;
        }
        size_t count = size_t(std::max(buffer_count, 2));
        cma_requests = uint64_t(count) * (frame_size + vf_bytes);
        pipeline_buffers = false;
        if (script.cma_budget > 0 && cma_requests > script.cma_budget) {
            memory.reset();
            slots.clear();
            return -ENOMEM;
        }
        slots.assign(count, Slot{});
        held.assign(slots.size(), false);
        // Each request's memory: the still planes (plane_gap apart, or in buffers of their own),
        // then the viewfinder's.
        bool separate = script.separate_planes && planes > 1;
        auto made = std::make_shared<BufferMemory>();
        uint32_t span = plane_offsets[planes - 1] + plane_sizes[planes - 1];
        request_buffers.assign(slots.size(), {});
        request_fds.assign(slots.size(), {});
        buffer_syncs.clear();
        for (size_t index = 0; index < slots.size(); index++) {
            BufferMemory::Planes request;
            request.count = planes;
            if (separate) {
                for (uint32_t plane = 0; plane < planes; plane++) {
                    request_buffers[index].push_back(int(made->owned.size()));
                    made->owned.emplace_back(plane_sizes[plane], 0);
                    request.planes[plane] = made->owned.back().data();
                    request.bytes[plane] = plane_sizes[plane];
                }
            } else {
                request_buffers[index].push_back(int(made->owned.size()));
                made->owned.emplace_back(span, 0);
                for (uint32_t plane = 0; plane < planes; plane++) {
                    request.planes[plane] = made->owned.back().data() + plane_offsets[plane];
                    request.bytes[plane] = plane_sizes[plane];
                }
            }
            if (vf_bytes) {
                request_buffers[index].push_back(int(made->owned.size()));
                made->owned.emplace_back(vf_bytes, 0);
                request.vf = made->owned.back().data();
                request.vf_bytes = vf_bytes;
            }
            // As the real camera's configure: every buffer of the request is synchronised.
            request_fds[index] = request_buffers[index];
            made->requests.push_back(request);
        }
        memory = std::move(made);
        return 0;
    }

    void sync_dmabuf(int fd, uint64_t flags) override {
        auto &counts = buffer_syncs[fd];
        if (flags & DMA_BUF_SYNC_END) counts.second++;
        else counts.first++;
    }

    Rectangle scaler_crop_control_default() override {
#if LIBCAMERA_VERSION_MAJOR > 0 || LIBCAMERA_VERSION_MINOR >= 1
        if (script.has_scaler_crop && configured) return default_crop;
#endif
        return Rectangle();
    }

    bool frame_duration_range(int64_t &minimum, int64_t &maximum) override {
        if (script.frame_duration_max_us <= 0) return false;
        if (placeholders()) {
            // ipa_base.cpp's ipaControls until IpaBase::configure states the mode's limits.
            minimum = 33333;
            maximum = 120000;
            return true;
        }
        minimum = script.frame_duration_min_us;
        maximum = script.frame_duration_max_us;
        return true;
    }

    int start() override {
        if (slots.empty()) return -EINVAL;
        if (running) return 0;
        if (script.cma_budget > 0 && !pipeline_buffers) {
            uint64_t raw = uint64_t(script.width) * 3 / 2 * script.height;
            uint64_t own = 4 * raw + frame_size + vf_bytes;
            if (cma_requests + own > script.cma_budget) return -ENOMEM;
            pipeline_buffers = true;
        }
        // As Camera::start(controls): the controls set while stopped, and the frame duration,
        // apply from the first frame.
        start_control_count = int(pending.size()) + (pending_crop ? 1 : 0) + (frame_duration_us > 0 ? 1 : 0);
        agc.frames = 0;
        // IpaBase::start gives a startupFrameCount only on the camera's first start
        // (firstStart_); pipeline_base.cpp marks that many frames FrameStartup.
        startup_left = started_once || !script.raspberrypi ? 0 : uint32_t(std::max(script.startup_frames, 0));
        started_once = true;
        last_timestamp = last_frame_duration = 0;
        if (frame_duration_us > 0) apply(SHUTTER_LC_CONTROL_FRAME_DURATION_LIMITS, float(frame_duration_us));
        for (const auto &[control, value] : pending) apply(control, value);
        if (pending_crop) {
            applied_crop = pending_crop_rect;
            applied_crop_set = true;
        }
        pending.clear();
        pending_crop = false;
        running = true;
        queued.clear();
        done.clear();
        for (size_t index = 0; index < slots.size(); index++)
            if (!held[index]) queue(int(index));
        return 0;
    }

    void queue(int index) {
        Slot &slot = slots[index];
        slot.controls = pending;
        slot.crop_set = pending_crop;
        slot.crop = pending_crop_rect;
        slot.af_triggers = af_triggers_set;
        slot.exposure_value_sets = exposure_value_sets;
        pending.clear();
        pending_crop = false;
        queued.push_back(index);
    }

    void stop() override {
        running = false;
        queued.clear();
        done.clear();
        delayed.clear();
        drain();
    }

    /// Applies one control now; an AfTrigger start in AfModeAuto starts the autofocus script.
    void apply(int control, float value) {
        applied[control] = value;
        if (control == SHUTTER_LC_CONTROL_LENS_POSITION) lens = value;
        if (control == SHUTTER_LC_CONTROL_EXPOSURE_VALUE) agc.set_ev(value);
        if (control == SHUTTER_LC_CONTROL_FRAME_DURATION_LIMITS) limit_frame_durations(int64_t(value), int64_t(value));
        // Af::setMode starts CAF over with PDAF (startAF), or stops it.
        if (control == SHUTTER_LC_CONTROL_AF_MODE) caf = FakeCaf();
        if (control == SHUTTER_LC_CONTROL_AF_MODE && int(value) == 2 && script.has_autofocus) {
            // AfModeContinuous: scans by itself, then holds focus.
            af_state = SHUTTER_LC_AF_SCANNING;
            af_frames_left = script.af_scan_frames;
        }
        bool autoMode = applied.count(SHUTTER_LC_CONTROL_AF_MODE) && int(applied[SHUTTER_LC_CONTROL_AF_MODE]) == 1;
        if (control == SHUTTER_LC_CONTROL_AF_TRIGGER && int(value) == 0 && script.has_autofocus && autoMode) {
            // af.cpp's Af::triggerScan takes a start only while the algorithm is idle (AfModeAuto,
            // no scan under way): one that comes mid-scan is ignored, the scan ends as it would.
            if (script.raspberrypi && af_state == SHUTTER_LC_AF_SCANNING) return;
            af_triggers++;
            af_state = SHUTTER_LC_AF_SCANNING;
            af_frames_left = script.af_scan_frames;
        }
    }

    /// The frame durations the IPA allows from now: `minimum` and `maximum` in µs, 0 for its
    /// defaults (1/30 s and 250 s), each clamped to the mode's (IpaBase::applyFrameDurations,
    /// which IpaBase::configure calls with the defaults).
    void limit_frame_durations(int64_t minimum, int64_t maximum) {
        int64_t low = 0, high = 0;
        if (!frame_duration_range(low, high)) return;
        frame_limits[0] = std::clamp<int64_t>(minimum > 0 ? minimum : 33333, low, high);
        frame_limits[1] = std::clamp<int64_t>(maximum > 0 ? maximum : 250000000, low, high);
    }

    /// Puts FrameDurationLimits (both limits) on the next request queued.
    int request_frame_duration(int64_t microseconds) {
        int64_t low = 0, high = 0;
        if (!frame_duration_range(low, high)) return -ENOTSUP;
        pending[SHUTTER_LC_CONTROL_FRAME_DURATION_LIMITS] = float(microseconds);
        return 0;
    }

    bool continuous_autofocus() const {
        auto mode = applied.find(SHUTTER_LC_CONTROL_AF_MODE);
        return script.raspberrypi && script.has_autofocus && mode != applied.end() && int(mode->second) == 2;
    }

    /// The scene changes from the next frame on: CAF may scan again (see FakeCaf).
    void scene_change() {
        if (continuous_autofocus() && af_state != SHUTTER_LC_AF_SCANNING) caf.scene_changed(sequence);
    }

    /// The frames between a request carrying `control` and the first frame it shows in (see above).
    int delay_of(int control) const {
        if (!script.raspberrypi) return 0;
        if (control == SHUTTER_LC_CONTROL_EXPOSURE_VALUE) return script.control_delay;
        if (control == SHUTTER_LC_CONTROL_FRAME_DURATION_LIMITS) return script.frame_duration_delay;
        return 0;
    }

    int deliver(int64_t timestamp, uint8_t fill) {
        if (timestamp == SHUTTER_LC_FAKE_AT_CADENCE) {
            // The sensor starts reading a frame out one frame length after the last: the
            // previous frame's FrameDuration, VBLANK included.
            if (!script.raspberrypi || last_frame_duration <= 0) return -EINVAL;
            timestamp = last_timestamp + last_frame_duration * 1000;
        }
        if (!running || queued.empty()) return -EAGAIN;
        int index = queued.front();
        queued.pop_front();
        Slot &slot = slots[index];
        uint32_t frame = sequence;
        bool scanning = af_state == SHUTTER_LC_AF_SCANNING;
        // AfMode before AfTrigger, whatever order the map holds them in.
        if (auto mode = slot.controls.find(SHUTTER_LC_CONTROL_AF_MODE); mode != slot.controls.end()) apply(mode->first, mode->second);
        for (const auto &[control, value] : slot.controls) {
            if (control == SHUTTER_LC_CONTROL_AF_MODE) continue;
            if (int delay = delay_of(control); delay > 0)
                delayed.emplace_back(frame + uint32_t(delay), control, value);
            else
                apply(control, value);
        }
        for (auto entry = delayed.begin(); entry != delayed.end();) {
            if (std::get<0>(*entry) > frame) { ++entry; continue; }
            apply(std::get<1>(*entry), std::get<2>(*entry));
            entry = delayed.erase(entry);
        }
        if (slot.crop_set) {
            applied_crop = slot.crop;
            applied_crop_set = true;
        }
        if (script.raspberrypi) {
            agc.frame();
            slot.exposure_us = agc.divided ? agc.exposure_us : script.exposure_time_us;
            slot.analogue_gain = agc.divided ? agc.analogue : 2.0f;
            slot.digital_gain = agc.divided ? agc.digital : 1.0f;
            // The frame is as long as the lower limit asks, longer for a longer exposure up to the upper.
            slot.frame_duration_us = std::min(std::max(frame_limits[0], int64_t(slot.exposure_us)), frame_limits[1]);
        }
        if (continuous_autofocus() && af_state != SHUTTER_LC_AF_SCANNING && caf.frame(frame)) {
            af_state = SHUTTER_LC_AF_SCANNING;
            af_frames_left = int(FakeCaf::scanFrames);
        }
        // The autofocus script: a cycle (a start in AfModeAuto, or continuous) scans for
        // af_scan_frames frames, then ends; a cycle started by this very request counts from here.
        if (af_state == SHUTTER_LC_AF_SCANNING && scanning) {
            if (af_frames_left > 0) af_frames_left--;
            if (af_frames_left == 0 && script.af_outcome != SHUTTER_LC_AF_SCANNING) af_state = script.af_outcome;
        }
        if (script.has_autofocus && af_state == SHUTTER_LC_AF_FOCUSED) lens = 2.5f;
        const BufferMemory::Planes &mapped = memory->requests[index];
        for (uint32_t plane = 0; plane < mapped.count && !script.keeps_planes; plane++)
            memset(const_cast<uint8_t *>(mapped.planes[plane]), fill, mapped.bytes[plane]);
        if (mapped.vf && !script.keeps_planes) memset(const_cast<uint8_t *>(mapped.vf), fill, mapped.vf_bytes);
        slot.timestamp = last_timestamp = timestamp;
        last_frame_duration = slot.frame_duration_us;
        slot.startup = startup_left > 0;
        if (startup_left > 0) startup_left--;
        slot.sequence = sequence++;
        slot.af_state = script.has_autofocus ? af_state : -1;
        slot.lens = script.has_autofocus ? lens : -1;
        slot.reported_crop = script.raspberrypi && script.has_scaler_crop ? (applied_crop_set ? applied_crop : default_crop) : Rectangle();
        done.push_back(index);
        signal();
        return 0;
    }

    ~FakeCamera() override;

    int next(shutter_lc_completed *out) override {
        if (vanished) return -ENODEV;
        if (done.empty()) {
            drain();
            return 0;
        }
        int index = done.front();
        done.pop_front();
        held[index] = true;
        sync_for_cpu(size_t(index), true);
        const Slot &slot = slots[index];
        const BufferMemory::Planes &mapped = memory->requests[index];
        memset(out, 0, sizeof *out);
        out->request = index;
        out->ok = !slot.startup;
        out->sequence = slot.sequence;
        out->sensor_timestamp = slot.timestamp;
        out->buffer_timestamp = slot.timestamp;
        // The fake runs on the test's virtual clock: it completes a frame the instant it is stamped.
        out->completed_at = slot.timestamp;
        out->af_state = slot.af_state;
        out->lens_position = slot.lens;
        out->af_triggers = slot.af_triggers;
        out->exposure_value_sets = slot.exposure_value_sets;
        if (script.raspberrypi) {
            out->exposure_time_us = slot.exposure_us;
            out->analogue_gain = slot.analogue_gain;
            out->digital_gain = slot.digital_gain;
            out->colour_temperature = 4500;
            out->frame_duration_us = slot.frame_duration_us;
        }
        if (!slot.reported_crop.isNull()) crop_reported(slot.reported_crop);
        out->plane_count = mapped.count;
        for (uint32_t plane = 0; plane < mapped.count; plane++) {
            out->planes[plane] = mapped.planes[plane];
            out->plane_bytes[plane] = mapped.bytes[plane];
        }
        out->viewfinder = mapped.vf;
        out->viewfinder_bytes = mapped.vf_bytes;
        return 1;
    }

    int release(int index) override {
        if (index < 0 || size_t(index) >= slots.size()) return -EINVAL;
        if (!held[index]) return 0;  // queued already, or by the next start
        held[index] = false;
        sync_for_cpu(size_t(index), false);
        if (running) queue(index);
        return 0;
    }

    bool offers(int control) const {
        switch (control) {
        case SHUTTER_LC_CONTROL_BRIGHTNESS: return true;
        case SHUTTER_LC_CONTROL_EXPOSURE_VALUE: return script.has_exposure_value;
        case SHUTTER_LC_CONTROL_AF_MODE:
        case SHUTTER_LC_CONTROL_AF_TRIGGER:
        case SHUTTER_LC_CONTROL_LENS_POSITION: return script.has_autofocus;
        default: return false;
        }
    }

    int set(int control, double value) override {
        if (!offers(control)) return -ENOTSUP;
        pending[control] = float(value);
        if (control == SHUTTER_LC_CONTROL_AF_TRIGGER && int(value) == 0) af_triggers_set++;
        if (control == SHUTTER_LC_CONTROL_EXPOSURE_VALUE) exposure_value_sets++;
        return 0;
    }

    int set_named(const char *name, double value) override {
        if (strcasecmp(name, "Brightness") == 0) return set(SHUTTER_LC_CONTROL_BRIGHTNESS, value);
        return -ENOTSUP;
    }

    int set_crop(const Rectangle &crop) override {
        if (!script.has_scaler_crop) return -ENOTSUP;
        pending_crop = true;
        pending_crop_rect = crop;
        return 0;
    }
};

struct FakeManager;

/// The fake system (shutter_lc_fake_system_install): the fake cameras plugged in, and the fake
/// camera manager running now, if any (guarded by fake_lock).
struct FakeSystem {
    struct Plugged {
        std::string id;
        shutter_lc_fake_config script;
    };
    std::vector<Plugged> plugged;
    FakeManager *running = nullptr;
    /// The fake cameras opened through the fake manager, open now.
    std::set<FakeCamera *> open;
};
std::mutex &fake_lock = *new std::mutex;
std::unique_ptr<FakeSystem> &fake_system = *new std::unique_ptr<FakeSystem>;

/// A camera manager over the fake system, behaving as libcamera's does for hot-plug
/// (camera_manager.cpp): start() registers the cameras there are; a camera plugged in later is
/// registered and announced (cameraAdded), unless one with the same id is still registered,
/// which libcamera's CameraManager::Private::addCamera refuses fatally ("Trying to register a
/// camera with a duplicated ID": counted here); a camera unplugged is unregistered only when its
/// pipeline noticed (cameraRemoved).
struct FakeManager final : ManagerBackend {
    /// The ids registered (guarded by fake_lock).
    std::vector<std::string> registered;

    FakeManager() {
        note_manager_call();
        std::lock_guard<std::mutex> guard(stats_lock);
        managers_created++;
    }
    ~FakeManager() override {
        note_manager_call();
        std::lock_guard<std::mutex> guard(fake_lock);
        if (fake_system && fake_system->running == this) fake_system->running = nullptr;
    }

    int start() override {
        note_manager_call();
        std::lock_guard<std::mutex> guard(fake_lock);
        if (!fake_system) return -ENODEV;
        fake_system->running = this;
        for (const auto &camera : fake_system->plugged) add(camera.id);
        return 0;
    }

    /// A camera's devices appeared (guarded by fake_lock by the caller).
    void add(const std::string &id) {
        if (std::find(registered.begin(), registered.end(), id) != registered.end()) {
            std::lock_guard<std::mutex> guard(stats_lock);
            duplicate_ids++;
            return;
        }
        registered.push_back(id);
        camera_added();
    }

    std::vector<std::pair<std::string, std::string>> cameras() override {
        note_manager_call();
        std::lock_guard<std::mutex> guard(fake_lock);
        std::vector<std::pair<std::string, std::string>> list;
        for (const auto &id : registered) list.emplace_back(id, "fake");
        return list;
    }

    shutter_lc_camera *open(const std::string &wanted, int *error) override {
        note_manager_call();
        FakeCamera *camera = find_and_acquire(wanted, error);
        if (camera) open_cameras++;
        return camera;
    }

    FakeCamera *find_and_acquire(const std::string &wanted, int *error) {
        std::lock_guard<std::mutex> guard(fake_lock);
        auto found = std::find_if(registered.begin(), registered.end(), [&](const std::string &id) {
            return wanted.empty() || id == wanted || strcasecmp(wanted.c_str(), "fake") == 0;
        });
        if (found == registered.end()) {
            *error = -ENOENT;
            return nullptr;
        }
        auto present = std::find_if(fake_system->plugged.begin(), fake_system->plugged.end(),
                                    [&](const FakeSystem::Plugged &camera) { return camera.id == *found; });
        // A stale camera (its devices gone, still registered): acquiring it fails.
        if (present == fake_system->plugged.end()) {
            *error = -ENODEV;
            return nullptr;
        }
        for (FakeCamera *camera : fake_system->open) {
            if (camera->id == *found) {
                *error = -EBUSY;
                return nullptr;
            }
        }
        auto *camera = new FakeCamera(present->script);
        camera->id = present->id;
        camera->through_manager = true;
        fake_system->open.insert(camera);
        *error = 0;
        return camera;
    }
};

FakeCamera::~FakeCamera() {
    if (!through_manager) return;
    ManagerThread::shared().run([this] {
        note_manager_call();  // Camera::release
        bool stale = false;
        {
            std::lock_guard<std::mutex> guard(fake_lock);
            if (fake_system) {
                fake_system->open.erase(this);
                // Gone, but still registered: the manager never saw it go.
                const FakeManager *running = fake_system->running;
                bool listed = running && std::find(running->registered.begin(), running->registered.end(), id) != running->registered.end();
                bool present = std::any_of(fake_system->plugged.begin(), fake_system->plugged.end(),
                                           [&](const FakeSystem::Plugged &camera) { return camera.id == id; });
                stale = listed && !present;
            }
        }
        camera_closed(stale);
    });
}

}  // namespace

bool fake_system_installed() {
    std::lock_guard<std::mutex> guard(fake_lock);
    return fake_system != nullptr;
}

std::unique_ptr<ManagerBackend> make_fake_manager() { return std::make_unique<FakeManager>(); }

}  // namespace shutter_lc

using namespace shutter_lc;

// MARK: - The C interface's fake functions

extern "C" {

shutter_lc_camera *shutter_lc_open_fake(const shutter_lc_fake_config *config) {
    if (!config || config->width == 0 || config->height == 0) return nullptr;
    return new FakeCamera(*config);
}

int shutter_lc_fake_deliver(shutter_lc_camera *camera, int64_t timestamp_ns, uint8_t fill) {
    auto *fake = dynamic_cast<FakeCamera *>(camera);
    return fake ? fake->deliver(timestamp_ns, fill) : -EINVAL;
}

int shutter_lc_fake_request_frame_duration(shutter_lc_camera *camera, int64_t frame_duration_us) {
    auto *fake = dynamic_cast<FakeCamera *>(camera);
    return fake ? fake->request_frame_duration(frame_duration_us) : -EINVAL;
}

int shutter_lc_fake_applied(shutter_lc_camera *camera, int control, float *value) {
    auto *fake = dynamic_cast<FakeCamera *>(camera);
    if (!fake) return -EINVAL;
    auto found = fake->applied.find(control);
    if (found == fake->applied.end()) return -ENOENT;
    *value = found->second;
    return 0;
}

int shutter_lc_fake_scaler_crop(shutter_lc_camera *camera, int32_t *x, int32_t *y, uint32_t *width, uint32_t *height) {
    auto *fake = dynamic_cast<FakeCamera *>(camera);
    if (!fake) return -EINVAL;
    if (!fake->applied_crop_set) return -ENOENT;
    *x = fake->applied_crop.x;
    *y = fake->applied_crop.y;
    *width = fake->applied_crop.width;
    *height = fake->applied_crop.height;
    return 0;
}

int shutter_lc_fake_af_triggers(shutter_lc_camera *camera) {
    auto *fake = dynamic_cast<FakeCamera *>(camera);
    return fake ? fake->af_triggers : -EINVAL;
}

int shutter_lc_fake_start_controls(shutter_lc_camera *camera) {
    auto *fake = dynamic_cast<FakeCamera *>(camera);
    return fake ? fake->start_control_count : -EINVAL;
}

int shutter_lc_fake_buffer_syncs(shutter_lc_camera *camera, int request, int *starts, int *ends, int capacity) {
    auto *fake = dynamic_cast<FakeCamera *>(camera);
    if (!fake) return -EINVAL;
    if (request < 0 || size_t(request) >= fake->request_buffers.size()) return -ENOENT;
    const auto &buffers = fake->request_buffers[size_t(request)];
    for (size_t index = 0; index < buffers.size() && int(index) < capacity; index++) {
        auto found = fake->buffer_syncs.find(buffers[index]);
        starts[index] = found == fake->buffer_syncs.end() ? 0 : found->second.first;
        ends[index] = found == fake->buffer_syncs.end() ? 0 : found->second.second;
    }
    return int(buffers.size());
}

int shutter_lc_fake_scene_change(shutter_lc_camera *camera) {
    auto *fake = dynamic_cast<FakeCamera *>(camera);
    if (!fake) return -EINVAL;
    fake->scene_change();
    return 0;
}

int shutter_lc_fake_system_install(void) {
    int result = 0;
    ManagerThread::shared().run([&] {
        if (open_cameras > 0) {
            result = -EBUSY;
            return;
        }
        retire_manager();  // libcamera's own, if it ran
        {
            std::lock_guard<std::mutex> guard(fake_lock);
            fake_system = std::make_unique<FakeSystem>();
        }
        std::lock_guard<std::mutex> guard(stats_lock);
        managers_created = managers_rebuilt = duplicate_ids = cameras_added = 0;
        manager_threads.clear();
    });
    return result;
}

void shutter_lc_fake_system_remove(void) {
    ManagerThread::shared().run([] {
        if (open_cameras > 0) return;  // still in use
        retire_manager();
        std::lock_guard<std::mutex> guard(fake_lock);
        fake_system.reset();
    });
}

int shutter_lc_fake_system_plug(const char *id, const shutter_lc_fake_config *config) {
    if (!id || !config || config->width == 0 || config->height == 0) return -EINVAL;
    std::lock_guard<std::mutex> guard(fake_lock);
    if (!fake_system) return -EINVAL;
    for (const auto &camera : fake_system->plugged)
        if (camera.id == id) return -EEXIST;
    fake_system->plugged.push_back({ id, *config });
    // The hot-plug: the running manager's enumerator sees the devices and its pipeline
    // handler registers the camera.
    if (fake_system->running) fake_system->running->add(id);
    return 0;
}

int shutter_lc_fake_system_unplug(const char *id, int noticed) {
    if (!id) return -EINVAL;
    std::lock_guard<std::mutex> guard(fake_lock);
    if (!fake_system) return -EINVAL;
    auto &plugged = fake_system->plugged;
    auto found = std::find_if(plugged.begin(), plugged.end(), [&](const FakeSystem::Plugged &camera) { return camera.id == id; });
    if (found == plugged.end()) return -ENOENT;
    plugged.erase(found);
    for (FakeCamera *camera : fake_system->open)
        if (camera->id == id) camera->vanished = true;
    if (noticed && fake_system->running) {
        auto &registered = fake_system->running->registered;
        registered.erase(std::remove(registered.begin(), registered.end(), std::string(id)), registered.end());
    }
    return 0;
}

void shutter_lc_fake_system_stats(shutter_lc_manager_stats *out) {
    std::lock_guard<std::mutex> guard(stats_lock);
    memset(out, 0, sizeof *out);
    out->managers_created = managers_created;
    out->managers_rebuilt = managers_rebuilt;
    out->manager_threads = int(manager_threads.size());
    out->duplicate_ids = duplicate_ids;
    out->cameras_added = cameras_added;
}

}  // extern "C"
