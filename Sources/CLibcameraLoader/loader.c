// The libcamera backend, opened when a board's camera may be a libcamera one: the
// functions of shutter_libcamera.h, each forwarding to the plugin's own, resolved by
// shutter_lc_load.
//
// The plugin is CLibcameraBackend built as a shared library (libshutter-libcamera.so, the
// package's `shutter-libcamera` product): it links libcamera, which maps lttng-ust, libdw,
// libunwind, libyaml, udev and GnuTLS (about 5 MiB resident) into every process that links it,
// though a simulator board or a USB webcam's never calls it.
//
// Every function is resolved in shutter_lc_load, so a plugin without one is refused there, once,
// with dlsym's message, and no forwarder ever meets a missing function. The forwarders are
// hidden: an executable that exports its symbols (the Swift driver's -export-dynamic: every
// debug build, and a release build's other than `shutter`, which Package.swift links with
// --no-export-dynamic) would otherwise put a default-visibility shutter_lc_open in place of the
// plugin's own wherever the plugin calls its exported functions through the PLT. (The release
// `shutter` exports none: hidden changes nothing there.)
#define _GNU_SOURCE
#include "shutter_libcamera_loader.h"
#include "shutter_system.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/// The plugin's file name: beside the executable in a build directory, under ../lib/shutter installed.
static const char *const plugin_name = "libshutter-libcamera.so";

#define SHUTTER_LC_FUNCTIONS(X) \
    X(shutter_lc_header_version) \
    X(shutter_lc_runtime_version) \
    X(shutter_lc_list) \
    X(shutter_lc_watch_cameras) \
    X(shutter_lc_watch_take) \
    X(shutter_lc_watch_close) \
    X(shutter_lc_open) \
    X(shutter_lc_open_fake) \
    X(shutter_lc_fake_deliver) \
    X(shutter_lc_fake_request_frame_duration) \
    X(shutter_lc_fake_applied) \
    X(shutter_lc_fake_scaler_crop) \
    X(shutter_lc_fake_af_triggers) \
    X(shutter_lc_fake_start_controls) \
    X(shutter_lc_fake_buffer_syncs) \
    X(shutter_lc_fake_scene_change) \
    X(shutter_lc_fake_system_install) \
    X(shutter_lc_fake_system_remove) \
    X(shutter_lc_fake_system_plug) \
    X(shutter_lc_fake_system_unplug) \
    X(shutter_lc_fake_system_stats) \
    X(shutter_lc_close) \
    X(shutter_lc_id) \
    X(shutter_lc_model) \
    X(shutter_lc_formats) \
    X(shutter_lc_sizes) \
    X(shutter_lc_controls) \
    X(shutter_lc_scaler_crop_maximum) \
    X(shutter_lc_scaler_crop_default) \
    X(shutter_lc_device_nodes) \
    X(shutter_lc_lock_holder) \
    X(shutter_lc_configure) \
    X(shutter_lc_set_frame_rate) \
    X(shutter_lc_start) \
    X(shutter_lc_stop) \
    X(shutter_lc_poll_fd) \
    X(shutter_lc_next) \
    X(shutter_lc_release) \
    X(shutter_lc_buffers_retain) \
    X(shutter_lc_buffers_release) \
    X(shutter_lc_buffers_count) \
    X(shutter_lc_buffers_planes) \
    X(shutter_lc_set_float) \
    X(shutter_lc_set_int) \
    X(shutter_lc_set_named) \
    X(shutter_lc_set_scaler_crop)

// shutter_lc_open_file(file, error, size): opens one file, as CShutterSystem_openLibrary does for the
// other loaders; shutter_lc_load chooses the file.
CSHUTTERSYSTEM_LAZY_LOADER(SHUTTER_LC_FUNCTIONS, shutter_lc_open_file, plugin_name)

int shutter_lc_load(const char *file, char *error, size_t size) {
    if (file != NULL) return shutter_lc_open_file(file, error, size);
    // Beside the executable (.build/release/shutter, a test bundle, the capture check), else
    // ../lib/shutter from it (/usr/local/bin/shutter → /usr/local/lib/shutter).
    char executable[PATH_MAX];
    ssize_t length = readlink("/proc/self/exe", executable, sizeof executable - 1);
    if (length <= 0) {
        snprintf(error, size, "cannot find %s: /proc/self/exe cannot be read", plugin_name);
        return -1;
    }
    executable[length] = '\0';
    char *slash = strrchr(executable, '/');   // the kernel's path is absolute
    if (slash != NULL) *slash = '\0';
    char candidates[2][PATH_MAX];
    snprintf(candidates[0], PATH_MAX, "%s/%s", executable, plugin_name);
    snprintf(candidates[1], PATH_MAX, "%s/../lib/shutter/%s", executable, plugin_name);
    // The first file there is the one tried: a plugin that is there but cannot load (libcamera
    // missing) is named with its reason, not hidden behind a later candidate's "no such file".
    for (int index = 0; index < 2; index++) {
        if (access(candidates[index], F_OK) == 0) return shutter_lc_open_file(candidates[index], error, size);
    }
    // None there, unless a plugin already opened was since removed: then it is kept.
    if (shutter_lc_open_file(candidates[1], error, size) == 0) return 0;
    snprintf(error, size, "no %s beside the executable (%s) nor in %s", plugin_name, candidates[0], candidates[1]);
    return -1;
}

/// The Swift runtime's own way to be told argv (exported by libswiftCore 6.0 and later); weak,
/// so a program without the runtime still links.
extern void _swift_stdlib_overrideUnsafeArgvArgc(char **argv, int argc) __attribute__((weak));

/// Whether quiet_libcamera_logs set LIBCAMERA_LOG_LEVELS.
static int log_levels_set_by_shutter = 0;

/// libcamera logs INFO and WARN lines to stderr by default (vimc: "no static properties for
/// Sensor B" on every open); shutter's stderr is for its own errors. libcamera's logger reads
/// LIBCAMERA_LOG_LEVELS when its first category logs, so the variable must be set before then,
/// and setenv while other threads may read the environment (localtime_r reads TZ) is undefined
/// behaviour: so it is set here, in the executable, before main and before any thread, not in
/// the plugin, which is opened once threads run. A user's own setting wins; hooks are started
/// without ours (shutter_lc_log_levels_set_by_shutter).
///
/// setenv moves `environ` off the initial stack, and the Swift runtime finds argv on Linux by
/// looking there from `environ`: with the standard library linked statically (the release
/// build), its own constructor runs after this one and would find no arguments
/// (`CommandLine.arguments` empty). So argv, which glibc gives every constructor, is handed to
/// the runtime first; with a shared runtime, already loaded, this only repeats what it found.
__attribute__((constructor)) static void quiet_libcamera_logs(int argc, char **argv, char **environment) {
    (void)environment;
    if (getenv("LIBCAMERA_LOG_LEVELS")) return;
    if (_swift_stdlib_overrideUnsafeArgvArgc && argv) _swift_stdlib_overrideUnsafeArgvArgc(argv, argc);
    log_levels_set_by_shutter = setenv("LIBCAMERA_LOG_LEVELS", "*:ERROR", 0) == 0;
}

int shutter_lc_log_levels_set_by_shutter(void) { return log_levels_set_by_shutter; }

#define HIDDEN __attribute__((visibility("hidden")))

HIDDEN const char *shutter_lc_header_version(void) { return library.typed.shutter_lc_header_version(); }

HIDDEN const char *shutter_lc_runtime_version(void) { return library.typed.shutter_lc_runtime_version(); }

HIDDEN int shutter_lc_list(shutter_lc_camera_entry *entries, int capacity) {
    return library.typed.shutter_lc_list(entries, capacity);
}

HIDDEN shutter_lc_watch *shutter_lc_watch_cameras(void (*wake)(void *), void *context) {
    return library.typed.shutter_lc_watch_cameras(wake, context);
}

HIDDEN int shutter_lc_watch_take(shutter_lc_watch *watch) { return library.typed.shutter_lc_watch_take(watch); }

HIDDEN void shutter_lc_watch_close(shutter_lc_watch *watch) { library.typed.shutter_lc_watch_close(watch); }

HIDDEN shutter_lc_camera *shutter_lc_open(const char *name, int *error) { return library.typed.shutter_lc_open(name, error); }

HIDDEN shutter_lc_camera *shutter_lc_open_fake(const shutter_lc_fake_config *config) {
    return library.typed.shutter_lc_open_fake(config);
}

HIDDEN int shutter_lc_fake_deliver(shutter_lc_camera *camera, int64_t timestamp_ns, uint8_t fill) {
    return library.typed.shutter_lc_fake_deliver(camera, timestamp_ns, fill);
}

HIDDEN int shutter_lc_fake_request_frame_duration(shutter_lc_camera *camera, int64_t frame_duration_us) {
    return library.typed.shutter_lc_fake_request_frame_duration(camera, frame_duration_us);
}

HIDDEN int shutter_lc_fake_applied(shutter_lc_camera *camera, int control, float *value) {
    return library.typed.shutter_lc_fake_applied(camera, control, value);
}

HIDDEN int shutter_lc_fake_scaler_crop(shutter_lc_camera *camera, int32_t *x, int32_t *y, uint32_t *width, uint32_t *height) {
    return library.typed.shutter_lc_fake_scaler_crop(camera, x, y, width, height);
}

HIDDEN int shutter_lc_fake_af_triggers(shutter_lc_camera *camera) {
    return library.typed.shutter_lc_fake_af_triggers(camera);
}

HIDDEN int shutter_lc_fake_start_controls(shutter_lc_camera *camera) {
    return library.typed.shutter_lc_fake_start_controls(camera);
}

HIDDEN int shutter_lc_fake_buffer_syncs(shutter_lc_camera *camera, int request, int *starts, int *ends, int capacity) {
    return library.typed.shutter_lc_fake_buffer_syncs(camera, request, starts, ends, capacity);
}

HIDDEN int shutter_lc_fake_scene_change(shutter_lc_camera *camera) { return library.typed.shutter_lc_fake_scene_change(camera); }

HIDDEN int shutter_lc_fake_system_install(void) { return library.typed.shutter_lc_fake_system_install(); }

HIDDEN void shutter_lc_fake_system_remove(void) { library.typed.shutter_lc_fake_system_remove(); }

HIDDEN int shutter_lc_fake_system_plug(const char *id, const shutter_lc_fake_config *config) {
    return library.typed.shutter_lc_fake_system_plug(id, config);
}

HIDDEN int shutter_lc_fake_system_unplug(const char *id, int noticed) {
    return library.typed.shutter_lc_fake_system_unplug(id, noticed);
}

HIDDEN void shutter_lc_fake_system_stats(shutter_lc_manager_stats *out) { library.typed.shutter_lc_fake_system_stats(out); }

HIDDEN void shutter_lc_close(shutter_lc_camera *camera) { library.typed.shutter_lc_close(camera); }

HIDDEN const char *shutter_lc_id(shutter_lc_camera *camera) { return library.typed.shutter_lc_id(camera); }

HIDDEN const char *shutter_lc_model(shutter_lc_camera *camera) { return library.typed.shutter_lc_model(camera); }

HIDDEN int shutter_lc_formats(shutter_lc_camera *camera, shutter_lc_format *formats, int capacity) {
    return library.typed.shutter_lc_formats(camera, formats, capacity);
}

HIDDEN int shutter_lc_sizes(shutter_lc_camera *camera, uint32_t fourcc, uint32_t *widths, uint32_t *heights, int capacity) {
    return library.typed.shutter_lc_sizes(camera, fourcc, widths, heights, capacity);
}

HIDDEN int shutter_lc_controls(shutter_lc_camera *camera, shutter_lc_control_info *controls, int capacity) {
    return library.typed.shutter_lc_controls(camera, controls, capacity);
}

HIDDEN int shutter_lc_scaler_crop_maximum(shutter_lc_camera *camera, int32_t *x, int32_t *y, uint32_t *width, uint32_t *height) {
    return library.typed.shutter_lc_scaler_crop_maximum(camera, x, y, width, height);
}

HIDDEN int shutter_lc_scaler_crop_default(shutter_lc_camera *camera, int32_t *x, int32_t *y, uint32_t *width, uint32_t *height) {
    return library.typed.shutter_lc_scaler_crop_default(camera, x, y, width, height);
}

HIDDEN int shutter_lc_device_nodes(shutter_lc_camera *camera) {
    return library.typed.shutter_lc_device_nodes(camera);
}

HIDDEN int shutter_lc_lock_holder(int fd) {
    return library.typed.shutter_lc_lock_holder(fd);
}

HIDDEN int shutter_lc_configure(shutter_lc_camera *camera, shutter_lc_stream_config *still, shutter_lc_stream_config *viewfinder, int buffer_count) {
    return library.typed.shutter_lc_configure(camera, still, viewfinder, buffer_count);
}

HIDDEN int shutter_lc_set_frame_rate(shutter_lc_camera *camera, double fps, int64_t *frame_duration_ns) {
    return library.typed.shutter_lc_set_frame_rate(camera, fps, frame_duration_ns);
}

HIDDEN int shutter_lc_start(shutter_lc_camera *camera) { return library.typed.shutter_lc_start(camera); }

HIDDEN void shutter_lc_stop(shutter_lc_camera *camera) { library.typed.shutter_lc_stop(camera); }

HIDDEN int shutter_lc_poll_fd(shutter_lc_camera *camera) { return library.typed.shutter_lc_poll_fd(camera); }

HIDDEN int shutter_lc_next(shutter_lc_camera *camera, shutter_lc_completed *out) {
    return library.typed.shutter_lc_next(camera, out);
}

HIDDEN int shutter_lc_release(shutter_lc_camera *camera, int request) {
    return library.typed.shutter_lc_release(camera, request);
}

HIDDEN shutter_lc_buffers *shutter_lc_buffers_retain(shutter_lc_camera *camera) {
    return library.typed.shutter_lc_buffers_retain(camera);
}

HIDDEN void shutter_lc_buffers_release(shutter_lc_buffers *buffers) { library.typed.shutter_lc_buffers_release(buffers); }

HIDDEN int shutter_lc_buffers_count(const shutter_lc_buffers *buffers) {
    return library.typed.shutter_lc_buffers_count(buffers);
}

HIDDEN int shutter_lc_buffers_planes(const shutter_lc_buffers *buffers, int request, const uint8_t **planes, uint32_t *bytes, int capacity) {
    return library.typed.shutter_lc_buffers_planes(buffers, request, planes, bytes, capacity);
}

HIDDEN int shutter_lc_set_float(shutter_lc_camera *camera, int control, float value) {
    return library.typed.shutter_lc_set_float(camera, control, value);
}

HIDDEN int shutter_lc_set_int(shutter_lc_camera *camera, int control, int32_t value) {
    return library.typed.shutter_lc_set_int(camera, control, value);
}

HIDDEN int shutter_lc_set_named(shutter_lc_camera *camera, const char *name, double value) {
    return library.typed.shutter_lc_set_named(camera, name, value);
}

HIDDEN int shutter_lc_set_scaler_crop(shutter_lc_camera *camera, int32_t x, int32_t y, uint32_t width, uint32_t height) {
    return library.typed.shutter_lc_set_scaler_crop(camera, x, y, width, height);
}
