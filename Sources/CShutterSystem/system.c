// ppoll and SCHED_BATCH need _GNU_SOURCE, which the Glibc module Swift imports is not built
// with: the functions that use them live here, compiled on their own.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <poll.h>
#include <stdio.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "shutter_system.h"

int CShutterSystem_renameNoReplace(int from_directory, const char *from, int to_directory, const char *to) {
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
    // Through syscall(2): glibc before 2.28 has no renameat2 wrapper.
    return (int)syscall(SYS_renameat2, from_directory, from, to_directory, to, RENAME_NOREPLACE);
}

int CShutterSystem_ppoll(struct pollfd *entries, unsigned long count, long long timeout_ns) {
    if (timeout_ns < 0) return ppoll(entries, (nfds_t)count, NULL, NULL);
    struct timespec timeout = { .tv_sec = (time_t)(timeout_ns / 1000000000), .tv_nsec = (long)(timeout_ns % 1000000000) };
    return ppoll(entries, (nfds_t)count, &timeout, NULL);
}

int CShutterSystem_startDetachedThread(void *(*body)(void *), void *context) {
    pthread_attr_t attributes;
    int result = pthread_attr_init(&attributes);
    if (result != 0) return result;
    result = pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    if (result == 0) result = pthread_create(&thread, &attributes, body, context);
    pthread_attr_destroy(&attributes);
    return result;
}

int CShutterSystem_makeCallingThreadBatch(void) {
    struct sched_param parameters = { .sched_priority = 0 };
    return (int)syscall(SYS_sched_setscheduler, 0, SCHED_BATCH, &parameters);
}

int CShutterSystem_callingThreadPolicy(void) {
    return (int)syscall(SYS_sched_getscheduler, 0);
}

int CShutterSystem_openLibrary(struct CShutterSystem_LazyLibrary *library, const char *file,
                               const char *const names[], void *functions[], size_t count,
                               char *error, size_t size) {
    pthread_mutex_lock(&library->lock);
    if (library->handle != NULL) {
        pthread_mutex_unlock(&library->lock);
        return 0;
    }
    void *handle = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        snprintf(error, size, "%s", dlerror());
        pthread_mutex_unlock(&library->lock);
        return -1;
    }
    // Into `functions` directly: no forwarder reads them before this returns 0.
    for (size_t index = 0; index < count; index++) {
        functions[index] = dlsym(handle, names[index]);
        if (functions[index] == NULL) {
            const char *why = dlerror();  // NULL if the symbol is there with the value 0
            if (why != NULL) snprintf(error, size, "%s", why);
            else snprintf(error, size, "%s is a null symbol", names[index]);
            dlclose(handle);
            pthread_mutex_unlock(&library->lock);
            return -1;
        }
    }
    library->handle = handle;
    pthread_mutex_unlock(&library->lock);
    return 0;
}
