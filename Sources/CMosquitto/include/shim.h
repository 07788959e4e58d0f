#ifndef CMOSQUITTO_SHIM_H
#define CMOSQUITTO_SHIM_H
// libmosquitto (2.0.11 on Debian 12, 2.0.21 on Debian 13, 2.1 on Debian sid; the same API), run inside shutter's
// own poll loop: its socket (mosquitto_socket, mosquitto_want_write) is watched by the loop, which
// calls mosquitto_loop_read / _write / _misc itself; the library never starts a thread.
//
// Swift cannot import the macros it needs (MQTT_PROTOCOL_V5, the MQTT v5 property identifiers
// are an enum and import as they are), so they are copied here under CMosquitto_ names.
//
// The library is not linked: it brings libssl and libcrypto, which would be mapped and partly
// resident in every daemon though only a board with an `mqtt` section uses
// them. loader.c
// defines each mosquitto_* function shutter calls, forwarding to the library that
// CMosquitto_load opened; Swift calls them as declared in <mosquitto.h>.
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <mosquitto.h>
#if LIBMOSQUITTO_VERSION_NUMBER < 2001000
// From 2.1 <mosquitto.h> includes the protocol's definitions itself, and the old header warns.
#include <mqtt_protocol.h>
#endif

static const int CMosquitto_PROTOCOL_V5 = MQTT_PROTOCOL_V5;
static const int CMosquitto_VERSION = LIBMOSQUITTO_VERSION_NUMBER;

/// Opens libmosquitto and resolves every function shutter calls, once: call it before the first
/// mosquitto_* call; after a success it returns 0 at once. Thread-safe.
///
/// - Parameters:
///   - file: the library to open, or NULL for its soname, `libmosquitto.so.1` (Debian 12 and 13).
///   - error: receives dlerror()'s text when the library or one of its functions is missing.
/// - Returns: 0, or -1 with `error` set; nothing is kept from a failed call, so it may be retried.
///
/// The corresponding C functions are `dlopen` and `dlsym`.
int CMosquitto_load(const char *file, char *error, size_t size);
#endif
