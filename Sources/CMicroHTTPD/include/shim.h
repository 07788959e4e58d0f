#ifndef CMICROHTTPD_SHIM_H
#define CMICROHTTPD_SHIM_H
// libmicrohttpd, run inside shutter's own poll loop: external polling through its epoll
// descriptor (MHD_USE_EPOLL, MHD_DAEMON_INFO_EPOLL_FD, MHD_get_timeout, MHD_run), no thread of
// its own, and connections suspended while an event stream has nothing to send.
//
// Swift cannot call the variadic MHD_start_daemon nor import the macros (MHD_SIZE_UNKNOWN,
// MHD_CONTENT_READER_END_*), so this shim starts the daemon from a settings struct and copies
// the macros under CMicroHTTPD_ names. Debian 12 ships 0.9.75 and Debian 13 ships 1.0.x: where
// the two differ (1.0 deprecates MHD_create_response_from_buffer and adds MHD_get_timeout64s),
// the difference is hidden here behind MHD_VERSION.
//
// The library is not linked: it brings GnuTLS and its helpers (p11-kit, nettle, gmp, idn2, …),
// which would be mapped and partly resident in every daemon though only a
// board with an `http` section uses them. loader.c defines each MHD_* function shutter calls,
// forwarding to the library that CMicroHTTPD_load opened; Swift and the helpers below call them
// as declared in <microhttpd.h>.
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <string.h>
#include <microhttpd.h>

/// Opens libmicrohttpd and resolves every function shutter calls, once: call it before the first
/// MHD_* call; after a success it returns 0 at once. Thread-safe.
///
/// - Parameters:
///   - file: the library to open, or NULL for its soname, `libmicrohttpd.so.12` (Debian 12 and 13).
///   - error: receives dlerror()'s text when the library or one of its functions is missing.
/// - Returns: 0, or -1 with `error` set; nothing is kept from a failed call, so it may be retried.
///
/// The corresponding C functions are `dlopen` and `dlsym`.
int CMicroHTTPD_load(const char *file, char *error, size_t size);

static const uint64_t CMicroHTTPD_SIZE_UNKNOWN = MHD_SIZE_UNKNOWN;
static const ssize_t CMicroHTTPD_CONTENT_READER_END_OF_STREAM = MHD_CONTENT_READER_END_OF_STREAM;
static const ssize_t CMicroHTTPD_CONTENT_READER_END_WITH_ERROR = MHD_CONTENT_READER_END_WITH_ERROR;

/// Receives one of the library's diagnostics, already formatted.
typedef void (*CMicroHTTPD_log_function)(void *context, const char *message);

/// What the server is started with. Kept alive by the caller until MHD_stop_daemon has returned:
/// the logger reads it on every message.
typedef struct CMicroHTTPD_settings {
    /// Connections at once (MHD_OPTION_CONNECTION_LIMIT); more are closed as they come. The
    /// library listens on no socket of its own (MHD_USE_NO_LISTEN_SOCKET): the caller accepts
    /// and hands each connection over with MHD_add_connection.
    unsigned int connection_limit;
    /// Seconds a connection may make no progress (MHD_OPTION_CONNECTION_TIMEOUT).
    unsigned int connection_timeout_seconds;
    /// Bytes per connection for the request line, headers and buffers
    /// (MHD_OPTION_CONNECTION_MEMORY_LIMIT): a longer header block is refused with 431.
    size_t connection_memory_limit;
    MHD_AccessHandlerCallback handler;
    void *handler_context;
    MHD_RequestCompletedCallback completed;
    void *completed_context;
    /// Told when a connection closes (MHD_OPTION_NOTIFY_CONNECTION), before its socket is.
    MHD_NotifyConnectionCallback connection_notify;
    void *connection_notify_context;
    CMicroHTTPD_log_function log;
    void *log_context;
} CMicroHTTPD_settings;

static inline void CMicroHTTPD_log_trampoline(void *context, const char *format, va_list arguments) {
    const CMicroHTTPD_settings *settings = (const CMicroHTTPD_settings *)context;
    char message[512];
    vsnprintf(message, sizeof message, format, arguments);
    if (settings->log != NULL) settings->log(settings->log_context, message);
}

/// Starts a daemon polled from outside through its epoll descriptor, with suspend and resume.
/// Returns NULL when the library refuses (its reason goes to the logger).
///
/// The corresponding C function is `MHD_start_daemon`.
static inline struct MHD_Daemon *CMicroHTTPD_start(CMicroHTTPD_settings *settings) {
    // SIGPIPE is ignored by shutter's event loop, so the library may use sendfile().
    return MHD_start_daemon(MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG | MHD_USE_NO_LISTEN_SOCKET,
                            0, NULL, NULL,
                            settings->handler, settings->handler_context,
                            // First, or the options before it log through the default logger.
                            MHD_OPTION_EXTERNAL_LOGGER, CMicroHTTPD_log_trampoline, (void *)settings,
                            MHD_OPTION_CONNECTION_LIMIT, settings->connection_limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, settings->connection_timeout_seconds,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, settings->connection_memory_limit,
                            MHD_OPTION_NOTIFY_COMPLETED, settings->completed, settings->completed_context,
                            MHD_OPTION_NOTIFY_CONNECTION, settings->connection_notify, settings->connection_notify_context,
                            MHD_OPTION_SIGPIPE_HANDLED_BY_APP, (int)1,
                            MHD_OPTION_END);
}

/// The epoll descriptor to poll for readability before each MHD_run; -1 when there is none.
///
/// The corresponding C function is `MHD_get_daemon_info(MHD_DAEMON_INFO_EPOLL_FD)`.
static inline int CMicroHTTPD_epoll_descriptor(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_EPOLL_FD);
    return info == NULL ? -1 : info->epoll_fd;
}

/// The socket of a connection; -1 when the library does not say.
///
/// The corresponding C function is `MHD_get_connection_info(MHD_CONNECTION_INFO_CONNECTION_FD)` (variadic).
static inline int CMicroHTTPD_connection_descriptor(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : (int)info->connect_fd;
}

/// Who a connection comes from, for counting wrong tokens per client: the IPv4 address (4 bytes)
/// or the IPv6 address's first 8 bytes (one /64 network: a host has many addresses in it) into
/// `out`; returns how many bytes, 0 when the library does not say.
///
/// The corresponding C function is `MHD_get_connection_info(MHD_CONNECTION_INFO_CLIENT_ADDRESS)` (variadic).
static inline int CMicroHTTPD_connection_peer(struct MHD_Connection *connection, uint8_t out[8]) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL) return 0;
    if (info->client_addr->sa_family == AF_INET) {
        memcpy(out, &((const struct sockaddr_in *)info->client_addr)->sin_addr, 4);
        return 4;
    }
    if (info->client_addr->sa_family == AF_INET6) {
        memcpy(out, &((const struct sockaddr_in6 *)info->client_addr)->sin6_addr, 8);
        return 8;
    }
    return 0;
}

/// The longest the caller may wait before calling MHD_run again, in milliseconds; -1: until a
/// descriptor is ready.
///
/// The corresponding C function is `MHD_get_timeout64s` (1.0) or `MHD_get_timeout` (0.9).
static inline int64_t CMicroHTTPD_timeout_milliseconds(struct MHD_Daemon *daemon) {
#if MHD_VERSION >= 0x00097701
    return MHD_get_timeout64s(daemon);
#else
    MHD_UNSIGNED_LONG_LONG timeout = 0;
    if (MHD_get_timeout(daemon, &timeout) != MHD_YES) return -1;
    return timeout > (MHD_UNSIGNED_LONG_LONG)INT64_MAX ? INT64_MAX : (int64_t)timeout;
#endif
}

/// A response whose body is a copy of `size` bytes at `data`.
///
/// The corresponding C function is `MHD_create_response_from_buffer_copy` (1.0) or
/// `MHD_create_response_from_buffer` with MHD_RESPMEM_MUST_COPY (0.9).
static inline struct MHD_Response *CMicroHTTPD_response_copying(size_t size, const void *data) {
#if MHD_VERSION >= 0x00097701
    return MHD_create_response_from_buffer_copy(size, data);
#else
    return MHD_create_response_from_buffer(size, (void *)data, MHD_RESPMEM_MUST_COPY);
#endif
}

#endif
