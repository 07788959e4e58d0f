#ifndef SHUTTER_SYSTEM_H
#define SHUTTER_SYSTEM_H
// Linux headers the Glibc module does not bring into Swift: the event loop
// receives SIGINT/SIGTERM through a signalfd.
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/timex.h>

static const int CShutterSystem_SFD_CLOEXEC = SFD_CLOEXEC;
static const int CShutterSystem_SFD_NONBLOCK = SFD_NONBLOCK;

// Whether the kernel's clock is synchronised (by NTP, chrony, systemd-timesyncd or a GPS/PPS
// source): adjtimex succeeds without TIME_ERROR and STA_UNSYNC is clear. Needs no daemon, no D-Bus.
static inline int CShutterSystem_clockIsSynchronized(void) {
    struct timex status = {0};
    int state = adjtimex(&status);
    return state >= 0 && state != TIME_ERROR && (status.status & STA_UNSYNC) == 0;
}
#endif
