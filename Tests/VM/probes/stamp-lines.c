// stamp-lines: prints each line it reads prefixed with CLOCK_MONOTONIC (ns) at the moment the
// read returned it, so the arrival a benchmark measures is the line's, not a script's wake-up.
//
//   stamp-lines                      lines from standard input (gpiomon's, through a pipe)
//   stamp-lines SOCKET [REQUEST]     lines from a Unix stream socket, after sending REQUEST and a
//                                    newline (shutter's API: '{"cmd":"subscribe"}')
//
//   cc -O2 -o stamp-lines stamp-lines.c
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int fd = 0;
    if (argc > 1) {
        struct sockaddr_un address = { .sun_family = AF_UNIX };
        snprintf(address.sun_path, sizeof address.sun_path, "%s", argv[1]);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof address) < 0) {
            perror("stamp-lines: connect");
            return 1;
        }
        if (argc > 2 && (write(fd, argv[2], strlen(argv[2])) < 0 || write(fd, "\n", 1) < 0)) {
            perror("stamp-lines: write");
            return 1;
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    char buffer[65536];
    size_t held = 0;
    for (;;) {
        ssize_t got = read(fd, buffer + held, sizeof buffer - held);
        if (got <= 0) return got < 0;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long long stamp = (long long)now.tv_sec * 1000000000 + now.tv_nsec;
        held += (size_t)got;
        char *start = buffer, *end;
        while ((end = memchr(start, '\n', held - (size_t)(start - buffer))) != NULL) {
            printf("%lld %.*s\n", stamp, (int)(end - start), start);
            start = end + 1;
        }
        held -= (size_t)(start - buffer);
        memmove(buffer, start, held);
        if (held == sizeof buffer) held = 0;  // a line longer than the buffer: dropped
    }
}
