#ifndef SHUTTER_LIBCAMERA_LOADER_H
#define SHUTTER_LIBCAMERA_LOADER_H
// The libcamera backend is a plugin, libshutter-libcamera.so, opened with dlopen when a board's
// camera may be a libcamera one: linked, libcamera would map lttng-ust, libdw,
// libunwind, libyaml, udev and GnuTLS, about 5 MiB resident, into every daemon, a simulator's
// or a USB webcam's too. loader.c defines the functions of shutter_libcamera.h, forwarding to
// the plugin's; Swift calls them once shutter_lc_load has succeeded.
//
// The functions are declared once, in the plugin's own header, included here (the path is
// relative: this module's importers see its declarations, not the plugin's target).

#include <stddef.h>

#include "../../CLibcameraBackend/include/shutter_libcamera.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Opens the plugin and resolves every function of shutter_libcamera.h, once: call it before the
/// first shutter_lc_* call; after a success it returns 0 at once. Thread-safe.
///
/// - Parameters:
///   - file: the plugin to open, or NULL for libshutter-libcamera.so beside the executable
///     (a build directory: .build/release/shutter, a test bundle), else in ../lib/shutter from
///     it (installed: /usr/local/bin/shutter, /usr/local/lib/shutter).
///   - error: receives why: the files looked for, or the plugin's path with dlerror()'s text
///     (libcamera itself missing, or a function missing).
/// - Returns: 0, or -1 with `error` set; nothing is kept from a failed call, so it may be retried.
///
/// The corresponding C functions are `dlopen` and `dlsym`.
int shutter_lc_load(const char *file, char *error, size_t size);

#ifdef __cplusplus
}
#endif
#endif
