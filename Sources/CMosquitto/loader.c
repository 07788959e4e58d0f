// libmosquitto, opened when the board has an `mqtt` section: the functions shutter
// calls, each forwarding to the library's own, resolved by CMosquitto_load.
//
// Every function is resolved in CMosquitto_load, so a library without one is refused there,
// once, with dlsym's message, and no forwarder ever meets a missing function. The forwarders
// are hidden: an executable that exports its symbols (the Swift driver's -export-dynamic: every
// debug build, and a release build's other than `shutter`, which Package.swift links with
// --no-export-dynamic) would otherwise put a default-visibility mosquitto_connect in place of
// the library's own wherever the library calls its exported functions through the PLT. (The
// release `shutter` exports none: hidden changes nothing there.)
#define _GNU_SOURCE
#include "shim.h"

#include "shutter_system.h"

/// The soname of libmosquitto 2.0 (Debian 12's 2.0.11, Debian 13's 2.0.21).
static const char *const default_file = "libmosquitto.so.1";

#define SHUTTER_MOSQUITTO_FUNCTIONS(X) \
    X(mosquitto_lib_init) \
    X(mosquitto_new) \
    X(mosquitto_destroy) \
    X(mosquitto_user_data_set) \
    X(mosquitto_int_option) \
    X(mosquitto_will_set_v5) \
    X(mosquitto_username_pw_set) \
    X(mosquitto_tls_set) \
    X(mosquitto_connect_v5_callback_set) \
    X(mosquitto_disconnect_v5_callback_set) \
    X(mosquitto_message_v5_callback_set) \
    X(mosquitto_connect_bind_v5) \
    X(mosquitto_connect_bind_async) \
    X(mosquitto_reconnect_async) \
    X(mosquitto_disconnect_v5) \
    X(mosquitto_socket) \
    X(mosquitto_want_write) \
    X(mosquitto_loop_read) \
    X(mosquitto_loop_write) \
    X(mosquitto_loop_misc) \
    X(mosquitto_publish_v5) \
    X(mosquitto_subscribe_v5) \
    X(mosquitto_property_add_int32) \
    X(mosquitto_property_add_binary) \
    X(mosquitto_property_read_string) \
    X(mosquitto_property_read_binary) \
    X(mosquitto_property_free_all) \
    X(mosquitto_strerror) \
    X(mosquitto_reason_string)

CSHUTTERSYSTEM_LAZY_LOADER(SHUTTER_MOSQUITTO_FUNCTIONS, CMosquitto_load, default_file)

#define HIDDEN __attribute__((visibility("hidden")))

HIDDEN int mosquitto_lib_init(void) { return library.typed.mosquitto_lib_init(); }

HIDDEN struct mosquitto *mosquitto_new(const char *id, bool clean_session, void *obj) {
    return library.typed.mosquitto_new(id, clean_session, obj);
}

HIDDEN void mosquitto_destroy(struct mosquitto *mosq) { library.typed.mosquitto_destroy(mosq); }

HIDDEN void mosquitto_user_data_set(struct mosquitto *mosq, void *obj) { library.typed.mosquitto_user_data_set(mosq, obj); }

HIDDEN int mosquitto_int_option(struct mosquitto *mosq, enum mosq_opt_t option, int value) {
    return library.typed.mosquitto_int_option(mosq, option, value);
}

HIDDEN int mosquitto_will_set_v5(struct mosquitto *mosq, const char *topic, int payloadlen, const void *payload,
                                 int qos, bool retain, mosquitto_property *properties) {
    return library.typed.mosquitto_will_set_v5(mosq, topic, payloadlen, payload, qos, retain, properties);
}

HIDDEN int mosquitto_username_pw_set(struct mosquitto *mosq, const char *username, const char *password) {
    return library.typed.mosquitto_username_pw_set(mosq, username, password);
}

HIDDEN int mosquitto_tls_set(struct mosquitto *mosq, const char *cafile, const char *capath, const char *certfile,
                             const char *keyfile, int (*pw_callback)(char *buf, int size, int rwflag, void *userdata)) {
    return library.typed.mosquitto_tls_set(mosq, cafile, capath, certfile, keyfile, pw_callback);
}

HIDDEN void mosquitto_connect_v5_callback_set(
    struct mosquitto *mosq, void (*on_connect)(struct mosquitto *, void *, int, int, const mosquitto_property *props)) {
    library.typed.mosquitto_connect_v5_callback_set(mosq, on_connect);
}

HIDDEN void mosquitto_disconnect_v5_callback_set(
    struct mosquitto *mosq, void (*on_disconnect)(struct mosquitto *, void *, int, const mosquitto_property *props)) {
    library.typed.mosquitto_disconnect_v5_callback_set(mosq, on_disconnect);
}

HIDDEN void mosquitto_message_v5_callback_set(
    struct mosquitto *mosq,
    void (*on_message)(struct mosquitto *, void *, const struct mosquitto_message *, const mosquitto_property *props)) {
    library.typed.mosquitto_message_v5_callback_set(mosq, on_message);
}

HIDDEN int mosquitto_connect_bind_v5(struct mosquitto *mosq, const char *host, int port, int keepalive,
                                     const char *bind_address, const mosquitto_property *properties) {
    return library.typed.mosquitto_connect_bind_v5(mosq, host, port, keepalive, bind_address, properties);
}

HIDDEN int mosquitto_connect_bind_async(struct mosquitto *mosq, const char *host, int port, int keepalive,
                                        const char *bind_address) {
    return library.typed.mosquitto_connect_bind_async(mosq, host, port, keepalive, bind_address);
}

HIDDEN int mosquitto_reconnect_async(struct mosquitto *mosq) { return library.typed.mosquitto_reconnect_async(mosq); }

HIDDEN int mosquitto_disconnect_v5(struct mosquitto *mosq, int reason_code, const mosquitto_property *properties) {
    return library.typed.mosquitto_disconnect_v5(mosq, reason_code, properties);
}

HIDDEN int mosquitto_socket(struct mosquitto *mosq) { return library.typed.mosquitto_socket(mosq); }

HIDDEN bool mosquitto_want_write(struct mosquitto *mosq) { return library.typed.mosquitto_want_write(mosq); }

HIDDEN int mosquitto_loop_read(struct mosquitto *mosq, int max_packets) {
    return library.typed.mosquitto_loop_read(mosq, max_packets);
}

HIDDEN int mosquitto_loop_write(struct mosquitto *mosq, int max_packets) {
    return library.typed.mosquitto_loop_write(mosq, max_packets);
}

HIDDEN int mosquitto_loop_misc(struct mosquitto *mosq) { return library.typed.mosquitto_loop_misc(mosq); }

HIDDEN int mosquitto_publish_v5(struct mosquitto *mosq, int *mid, const char *topic, int payloadlen, const void *payload,
                                int qos, bool retain, const mosquitto_property *properties) {
    return library.typed.mosquitto_publish_v5(mosq, mid, topic, payloadlen, payload, qos, retain, properties);
}

HIDDEN int mosquitto_subscribe_v5(struct mosquitto *mosq, int *mid, const char *sub, int qos, int options,
                                  const mosquitto_property *properties) {
    return library.typed.mosquitto_subscribe_v5(mosq, mid, sub, qos, options, properties);
}

HIDDEN int mosquitto_property_add_int32(mosquitto_property **proplist, int identifier, uint32_t value) {
    return library.typed.mosquitto_property_add_int32(proplist, identifier, value);
}

HIDDEN int mosquitto_property_add_binary(mosquitto_property **proplist, int identifier, const void *value, uint16_t len) {
    return library.typed.mosquitto_property_add_binary(proplist, identifier, value, len);
}

HIDDEN const mosquitto_property *mosquitto_property_read_string(const mosquitto_property *proplist, int identifier,
                                                               char **value, bool skip_first) {
    return library.typed.mosquitto_property_read_string(proplist, identifier, value, skip_first);
}

HIDDEN const mosquitto_property *mosquitto_property_read_binary(const mosquitto_property *proplist, int identifier,
                                                               void **value, uint16_t *len, bool skip_first) {
    return library.typed.mosquitto_property_read_binary(proplist, identifier, value, len, skip_first);
}

HIDDEN void mosquitto_property_free_all(mosquitto_property **properties) { library.typed.mosquitto_property_free_all(properties); }

HIDDEN const char *mosquitto_strerror(int mosq_errno) { return library.typed.mosquitto_strerror(mosq_errno); }

HIDDEN const char *mosquitto_reason_string(int reason_code) { return library.typed.mosquitto_reason_string(reason_code); }
