#ifndef SHUTTER_SYSTEM_H
#define SHUTTER_SYSTEM_H
// Linux headers the Glibc module does not bring into Swift: the event loop
// receives SIGINT/SIGTERM through a signalfd.
#include <signal.h>
#include <sys/signalfd.h>

static const int CShutterSystem_SFD_CLOEXEC = SFD_CLOEXEC;
static const int CShutterSystem_SFD_NONBLOCK = SFD_NONBLOCK;
#endif
