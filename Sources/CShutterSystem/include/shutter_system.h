#ifndef SHUTTER_SYSTEM_H
#define SHUTTER_SYSTEM_H
// Linux headers the Glibc module does not bring into Swift: the event loop
// receives SIGINT/SIGTERM through a signalfd and work from other threads through an eventfd,
// and polls a V4L2 camera through an epoll instance; the API asks a socket's peer for its groups.
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/timex.h>
#include <unistd.h>

static const int CShutterSystem_SFD_CLOEXEC = SFD_CLOEXEC;
static const int CShutterSystem_SFD_NONBLOCK = SFD_NONBLOCK;
static const int CShutterSystem_EFD_CLOEXEC = EFD_CLOEXEC;
static const int CShutterSystem_EFD_NONBLOCK = EFD_NONBLOCK;

// SO_PEERGROUPS (Linux 4.13): the supplementary groups of a Unix socket's peer. Older C
// headers lack the name; 59 is its value in asm-generic/socket.h (arm, arm64, x86).
#ifdef SO_PEERGROUPS
static const int CShutterSystem_SO_PEERGROUPS = SO_PEERGROUPS;
#else
static const int CShutterSystem_SO_PEERGROUPS = 59;
#endif

// Whether the kernel's clock is synchronised (by NTP, chrony, systemd-timesyncd or a GPS/PPS
// source): adjtimex succeeds without TIME_ERROR and STA_UNSYNC is clear. Needs no daemon, no D-Bus.
static inline int CShutterSystem_clockIsSynchronized(void) {
    struct timex status = {0};
    int state = adjtimex(&status);
    return state >= 0 && state != TIME_ERROR && (status.status & STA_UNSYNC) == 0;
}
// The kernel clock's discipline for a rig's shot results: whether it is synchronised (as above)
// and its estimated error in microseconds (struct timex's esterror, which ntpd and chrony keep),
// or -1 when adjtimex fails. The corresponding C function is adjtimex.
static inline int CShutterSystem_clockDiscipline(long *estimatedErrorMicroseconds) {
    struct timex status = {0};
    int state = adjtimex(&status);
    if (state < 0) { *estimatedErrorMicroseconds = -1; return 0; }
    *estimatedErrorMicroseconds = status.esterror;
    return state != TIME_ERROR && (status.status & STA_UNSYNC) == 0;
}

// Renames `from` to `to` unless `to` exists (EEXIST then), in one step: no other writer can take
// the name between a check and the rename. EINVAL where the file system cannot. The
// corresponding C function is `renameat2` (RENAME_NOREPLACE).
int CShutterSystem_renameNoReplace(int from_directory, const char *from, int to_directory, const char *to);

// poll with a timeout in nanoseconds (negative: none), through ppoll: the event loop wakes at
// its deadline to the nanosecond, where poll's whole milliseconds wake it up to 1 ms late.
// The corresponding C function is `ppoll`.
int CShutterSystem_ppoll(struct pollfd *entries, unsigned long count, long long timeout_ns);

// A timer descriptor on CLOCK_MONOTONIC, readable from an absolute instant on: the event loop's
// deadline. ppoll's own timeout is not exact: the kernel lets a wait end up to 0.1 % of its
// length late whatever the thread's timer slack (select_estimate_accuracy in fs/select.c; 0.5 %
// for a niced thread): 300 µs at the end of a 300 ms double-press window. A timerfd's timer has
// no slack (fs/timerfd.c starts its hrtimer with none). The corresponding C functions are
// `timerfd_create` and `timerfd_settime` (TFD_TIMER_ABSTIME).
static inline int CShutterSystem_deadlineTimerCreate(void) {
    return timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
}
// Arms `descriptor` to become readable at `at_ns` (CLOCK_MONOTONIC; an instant already passed
// makes it readable at once), or disarms it when `arm` is 0.
static inline int CShutterSystem_deadlineTimerSet(int descriptor, int arm, long long at_ns) {
    // An it_value of zero disarms: an instant at or before the clock's origin is 1 ns after it.
    if (arm && at_ns < 1) at_ns = 1;
    struct itimerspec value = { .it_interval = { 0, 0 },
                                .it_value = { .tv_sec = arm ? (time_t)(at_ns / 1000000000) : 0,
                                              .tv_nsec = arm ? (long)(at_ns % 1000000000) : 0 } };
    return timerfd_settime(descriptor, TFD_TIMER_ABSTIME, &value, NULL);
}

// Arms `descriptor` to become readable at `first_ns` (CLOCK_MONOTONIC) and every `interval_ns`
// after: a sensor's frame clock for a camera made of software. The corresponding C function is
// `timerfd_settime` (TFD_TIMER_ABSTIME, with an interval).
static inline int CShutterSystem_periodicTimerSet(int descriptor, long long first_ns, long long interval_ns) {
    if (first_ns < 1) first_ns = 1;
    struct itimerspec value = { .it_interval = { .tv_sec = (time_t)(interval_ns / 1000000000), .tv_nsec = (long)(interval_ns % 1000000000) },
                                .it_value = { .tv_sec = (time_t)(first_ns / 1000000000), .tv_nsec = (long)(first_ns % 1000000000) } };
    return timerfd_settime(descriptor, TFD_TIMER_ABSTIME, &value, NULL);
}

// An epoll instance that watches `descriptor` alone for input (level-triggered), or -1 with
// errno: polled itself, it is readable when `descriptor` is, and asks `descriptor`'s driver only
// after the driver signalled (why: ShutterCapture's DriverReadiness). epoll_event is packed on
// x86-64, which Swift cannot build, hence C.
// The corresponding C functions are `epoll_create1` and `epoll_ctl` (EPOLL_CTL_ADD).
static inline int CShutterSystem_epollWatching(int descriptor) {
    int instance = epoll_create1(EPOLL_CLOEXEC);
    if (instance < 0) return -1;
    struct epoll_event watched = { .events = EPOLLIN, .data = { .fd = descriptor } };
    if (epoll_ctl(instance, EPOLL_CTL_ADD, descriptor, &watched) < 0) {
        int code = errno;
        close(instance);
        errno = code;
        return -1;
    }
    return instance;
}

// The calling thread's timer slack, in nanoseconds: how much later than asked the kernel may end
// its timed waits, to group wake-ups (50 µs by default; a thread created later inherits it).
// prctl is variadic, which Swift cannot call. The corresponding C function is `prctl`
// (PR_SET_TIMERSLACK, PR_GET_TIMERSLACK).
static inline int CShutterSystem_setTimerSlack(unsigned long nanoseconds) {
    return prctl(PR_SET_TIMERSLACK, nanoseconds, 0, 0, 0);
}
static inline long CShutterSystem_timerSlack(void) {
    return prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
}

// A thread of shutter's own, detached, running body(context): the photo encode's workers
// (ShutterCapture's BatchWorker). Returns 0 or an errno value.
// The corresponding C function is `pthread_create` (PTHREAD_CREATE_DETACHED).
int CShutterSystem_startDetachedThread(void *(*body)(void *), void *context);

// Makes the calling thread batch work (SCHED_BATCH, sched(7)) at nice as it is: woken, it does
// not preempt the thread running on its CPU, and otherwise shares the CPUs as ordinary work.
// Through the system call: on Linux the policy is the thread's, where POSIX's wrapper means the
// process's (musl's refuses with ENOSYS). Returns 0, or -1 with errno.
// The corresponding C function is `sched_setscheduler`.
int CShutterSystem_makeCallingThreadBatch(void);

// The calling thread's scheduling policy (SCHED_OTHER 0, SCHED_BATCH 3, ...), or -1 with errno.
// The corresponding C function is `sched_getscheduler`.
int CShutterSystem_callingThreadPolicy(void);

// Names the calling thread for `ps -L` and /proc (at most 15 bytes are kept).
// The corresponding C function is `prctl` (PR_SET_NAME).
static inline int CShutterSystem_nameCallingThread(const char *name) {
    return prctl(PR_SET_NAME, name, 0, 0, 0);
}

// A library opened on first use (libmosquitto, libmicrohttpd), by a loader that
// forwards each function shutter calls to the library's own. Initialise with
// CSHUTTERSYSTEM_LAZY_LIBRARY.
struct CShutterSystem_LazyLibrary {
    pthread_mutex_t lock;
    void *handle;  // NULL until opened
};
#define CSHUTTERSYSTEM_LAZY_LIBRARY { PTHREAD_MUTEX_INITIALIZER, NULL }

// Opens `file` once (RTLD_NOW | RTLD_LOCAL: its symbols, and its own libraries', stay out of
// the process's namespace) and resolves every one of `names` into `functions`, under the
// library's lock: a library that lacks one is refused here, once, with dlsym's message, so no
// forwarder ever meets a missing function. Returns 0 (also when already open), or -1 with the
// reason in `error`; a failure may be retried. The corresponding C functions are `dlopen` and `dlsym`.
int CShutterSystem_openLibrary(struct CShutterSystem_LazyLibrary *library, const char *file,
                               const char *const names[], void *functions[], size_t count,
                               char *error, size_t size);

// What a loader defines from FUNCTIONS, an X-macro listing the library's functions it calls:
// `library.typed`, the functions as the library's header types them (forwarders call them), and
// `int LOAD(const char *file, char *error, size_t size)`, which opens `file` (NULL: DEFAULT_FILE)
// through CShutterSystem_openLibrary (hidden: called from within the executable only).
#define CSHUTTERSYSTEM_LAZY_LOADER(FUNCTIONS, LOAD, DEFAULT_FILE) \
    struct functions { FUNCTIONS(CSHUTTERSYSTEM_LAZY_FIELD) }; \
    static const char *const names[] = { FUNCTIONS(CSHUTTERSYSTEM_LAZY_NAME) }; \
    /* Filled name by name before LOAD first returns 0; only read after that. */ \
    static union { struct functions typed; void *untyped[sizeof names / sizeof names[0]]; } library; \
    _Static_assert(sizeof(struct functions) == sizeof library.untyped, "one pointer per name, no padding"); \
    static struct CShutterSystem_LazyLibrary opened = CSHUTTERSYSTEM_LAZY_LIBRARY; \
    __attribute__((visibility("hidden"))) int LOAD(const char *file, char *error, size_t size) { \
        return CShutterSystem_openLibrary(&opened, file != NULL ? file : DEFAULT_FILE, names, library.untyped, \
                                          sizeof names / sizeof names[0], error, size); \
    }
#define CSHUTTERSYSTEM_LAZY_FIELD(name) __typeof__(&name) name;
#define CSHUTTERSYSTEM_LAZY_NAME(name) #name,
#endif
