// ppoll needs _GNU_SOURCE, which the Glibc module Swift imports is not built with: the one
// function that uses it lives here, compiled on its own.
#define _GNU_SOURCE
#include <poll.h>
#include <signal.h>
#include <time.h>
#include "shutter_system.h"

int CShutterSystem_ppoll(struct pollfd *entries, unsigned long count, long long timeout_ns) {
    if (timeout_ns < 0) return ppoll(entries, (nfds_t)count, NULL, NULL);
    struct timespec timeout = { .tv_sec = (time_t)(timeout_ns / 1000000000), .tv_nsec = (long)(timeout_ns % 1000000000) };
    return ppoll(entries, (nfds_t)count, &timeout, NULL);
}
