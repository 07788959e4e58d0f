// slow-write.so: stretches the writing and the naming of a file, as a slow SD card does, so a
// kill, a full disk, a reader or a second writer lands in the middle (LD_PRELOAD).
//   - A write() to a file whose path contains $SLOW_WRITE_MATCH (unset: none) first sleeps
//     $SLOW_WRITE_DELAY_MS (default 40) and then writes at most $SLOW_WRITE_CHUNK bytes (default
//     4096): the caller sees a short write and writes the rest in further calls, as it must for
//     any write. With $SLOW_WRITE_LOG set, each such write appends a line to that file:
//     "PATH BYTES-ASKED RESULT" (RESULT -1: it failed).
//   - With $SLOW_LINK_DELAY_MS set, a linkat() the file system refuses for want of hard links
//     (EPERM: FAT) returns that much later: a writer that then renames to the name it found free
//     (shutter on FAT) does so that long after the look, while another writer may take the name.
// Every other call goes straight through.
//
//   cc -O2 -shared -fPIC -o slow-write.so slow-write.c -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static ssize_t (*real_write)(int, const void *, size_t);
static int (*real_linkat)(int, const char *, int, const char *, int);

static long setting(const char *name, long otherwise) {
    const char *text = getenv(name);
    return text && *text ? strtol(text, NULL, 10) : otherwise;
}

static void sleep_ms(long milliseconds) {
    struct timespec pause = { milliseconds / 1000, (milliseconds % 1000) * 1000000L };
    nanosleep(&pause, NULL);
}

int linkat(int from_directory, const char *from, int to_directory, const char *to, int flags) {
    if (!real_linkat) real_linkat = (int (*)(int, const char *, int, const char *, int))dlsym(RTLD_NEXT, "linkat");
    int result = real_linkat(from_directory, from, to_directory, to, flags);
    int saved = errno;
    long delay = setting("SLOW_LINK_DELAY_MS", 0);
    if (result != 0 && saved == EPERM && delay > 0) sleep_ms(delay);
    errno = saved;
    return result;
}

ssize_t write(int fd, const void *bytes, size_t count) {
    if (!real_write) real_write = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t length = readlink(link, path, sizeof path - 1);
    const char *match = getenv("SLOW_WRITE_MATCH");
    if (length > 0 && match && *match) {
        path[length] = 0;
        if (strstr(path, match)) {
            long delay = setting("SLOW_WRITE_DELAY_MS", 40), chunk = setting("SLOW_WRITE_CHUNK", 4096);
            sleep_ms(delay);
            if (chunk > 0 && count > (size_t)chunk) count = (size_t)chunk;
            ssize_t result = real_write(fd, bytes, count);
            int saved = errno;
            const char *log = getenv("SLOW_WRITE_LOG");
            int logfd = log && *log ? open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644) : -1;
            if (logfd >= 0) {
                char line[4200];
                int n = snprintf(line, sizeof line, "%s %zu %zd\n", path, count, result);
                if (n > 0) real_write(logfd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
                close(logfd);
            }
            errno = saved;
            return result;
        }
    }
    return real_write(fd, bytes, count);
}
