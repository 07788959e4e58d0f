#ifndef CMOSQUITTO_SHIM_H
#define CMOSQUITTO_SHIM_H
// libmosquitto (2.0.11 on Debian 12, 2.0.21 on Debian 13; the same API), run inside shutter's
// own poll loop: its socket (mosquitto_socket, mosquitto_want_write) is watched by the loop, which
// calls mosquitto_loop_read / _write / _misc itself; the library never starts a thread.
//
// Swift cannot import the macros it needs (MQTT_PROTOCOL_V5, the MQTT v5 property identifiers
// are an enum and import as they are), so they are copied here under CMosquitto_ names.
#include <stdbool.h>
#include <stdint.h>
#include <mosquitto.h>
#include <mqtt_protocol.h>

static const int CMosquitto_PROTOCOL_V5 = MQTT_PROTOCOL_V5;
static const int CMosquitto_VERSION = LIBMOSQUITTO_VERSION_NUMBER;
#endif
