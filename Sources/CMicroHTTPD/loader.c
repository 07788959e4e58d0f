// libmicrohttpd, opened when the board has an `http` section: the functions shutter
// and shim.h's helpers call, each forwarding to the library's own, resolved by CMicroHTTPD_load.
//
// Every function is resolved in CMicroHTTPD_load, so a library without one is refused there,
// once, with dlsym's message, and no forwarder ever meets a missing function. The forwarders
// are hidden: an executable that exports its symbols (the Swift driver's -export-dynamic: every
// debug build, and a release build's other than `shutter`, which Package.swift links with
// --no-export-dynamic) would otherwise put a default-visibility MHD_run in place of the
// library's own wherever the library calls its exported functions through the PLT. (The release
// `shutter` exports none: hidden changes nothing there.)
#define _GNU_SOURCE
#include "shim.h"

#include "shutter_system.h"

/// The soname of libmicrohttpd 0.9.x and 1.0 (Debian 12's 0.9.75, Debian 13's 1.0.1).
static const char *const default_file = "libmicrohttpd.so.12";

// What the two versions' helpers in shim.h call differs (see there).
#if MHD_VERSION >= 0x00097701
#define SHUTTER_MICROHTTPD_VERSIONED(X) X(MHD_get_timeout64s) X(MHD_create_response_from_buffer_copy)
#else
#define SHUTTER_MICROHTTPD_VERSIONED(X) X(MHD_get_timeout) X(MHD_create_response_from_buffer)
#endif

#define SHUTTER_MICROHTTPD_FUNCTIONS(X) \
    X(MHD_start_daemon_va) \
    X(MHD_stop_daemon) \
    X(MHD_run) \
    X(MHD_add_connection) \
    X(MHD_get_daemon_info) \
    X(MHD_get_connection_info) \
    X(MHD_lookup_connection_value) \
    X(MHD_suspend_connection) \
    X(MHD_resume_connection) \
    X(MHD_create_response_from_callback) \
    X(MHD_create_response_from_fd) \
    X(MHD_add_response_header) \
    X(MHD_queue_response) \
    X(MHD_destroy_response) \
    SHUTTER_MICROHTTPD_VERSIONED(X)

CSHUTTERSYSTEM_LAZY_LOADER(SHUTTER_MICROHTTPD_FUNCTIONS, CMicroHTTPD_load, default_file)

#define HIDDEN __attribute__((visibility("hidden")))

// The variadic MHD_start_daemon goes to the library's va_list form, which it is made of.
HIDDEN struct MHD_Daemon *MHD_start_daemon(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc,
                                           void *apc_cls, MHD_AccessHandlerCallback dh, void *dh_cls, ...) {
    va_list options;
    va_start(options, dh_cls);
    struct MHD_Daemon *daemon = library.typed.MHD_start_daemon_va(flags, port, apc, apc_cls, dh, dh_cls, options);
    va_end(options);
    return daemon;
}

HIDDEN void MHD_stop_daemon(struct MHD_Daemon *daemon) { library.typed.MHD_stop_daemon(daemon); }

HIDDEN enum MHD_Result MHD_run(struct MHD_Daemon *daemon) { return library.typed.MHD_run(daemon); }

HIDDEN enum MHD_Result MHD_add_connection(struct MHD_Daemon *daemon, MHD_socket client_socket,
                                          const struct sockaddr *addr, socklen_t addrlen) {
    return library.typed.MHD_add_connection(daemon, client_socket, addr, addrlen);
}

// Variadic with no va_list form: the variadic part is dropped. The information shim.h asks for
// (the epoll descriptor, the connection count, a connection's socket) takes no argument there.
HIDDEN const union MHD_DaemonInfo *MHD_get_daemon_info(struct MHD_Daemon *daemon, enum MHD_DaemonInfoType info_type,
                                                       ...) {
    return library.typed.MHD_get_daemon_info(daemon, info_type);
}

HIDDEN const union MHD_ConnectionInfo *MHD_get_connection_info(struct MHD_Connection *connection,
                                                               enum MHD_ConnectionInfoType info_type, ...) {
    return library.typed.MHD_get_connection_info(connection, info_type);
}

HIDDEN const char *MHD_lookup_connection_value(struct MHD_Connection *connection, enum MHD_ValueKind kind,
                                               const char *key) {
    return library.typed.MHD_lookup_connection_value(connection, kind, key);
}

HIDDEN void MHD_suspend_connection(struct MHD_Connection *connection) { library.typed.MHD_suspend_connection(connection); }

HIDDEN void MHD_resume_connection(struct MHD_Connection *connection) { library.typed.MHD_resume_connection(connection); }

HIDDEN struct MHD_Response *MHD_create_response_from_callback(uint64_t size, size_t block_size,
                                                              MHD_ContentReaderCallback crc, void *crc_cls,
                                                              MHD_ContentReaderFreeCallback crfc) {
    return library.typed.MHD_create_response_from_callback(size, block_size, crc, crc_cls, crfc);
}

HIDDEN struct MHD_Response *MHD_create_response_from_fd(size_t size, int fd) {
    return library.typed.MHD_create_response_from_fd(size, fd);
}

HIDDEN enum MHD_Result MHD_add_response_header(struct MHD_Response *response, const char *header, const char *content) {
    return library.typed.MHD_add_response_header(response, header, content);
}

HIDDEN enum MHD_Result MHD_queue_response(struct MHD_Connection *connection, unsigned int status_code,
                                          struct MHD_Response *response) {
    return library.typed.MHD_queue_response(connection, status_code, response);
}

HIDDEN void MHD_destroy_response(struct MHD_Response *response) { library.typed.MHD_destroy_response(response); }

#if MHD_VERSION >= 0x00097701
HIDDEN int64_t MHD_get_timeout64s(struct MHD_Daemon *daemon) { return library.typed.MHD_get_timeout64s(daemon); }

HIDDEN struct MHD_Response *MHD_create_response_from_buffer_copy(size_t size, const void *buffer) {
    return library.typed.MHD_create_response_from_buffer_copy(size, buffer);
}
#else
HIDDEN enum MHD_Result MHD_get_timeout(struct MHD_Daemon *daemon, MHD_UNSIGNED_LONG_LONG *timeout) {
    return library.typed.MHD_get_timeout(daemon, timeout);
}

HIDDEN struct MHD_Response *MHD_create_response_from_buffer(size_t size, void *buffer,
                                                            enum MHD_ResponseMemoryMode mode) {
    return library.typed.MHD_create_response_from_buffer(size, buffer, mode);
}
#endif
