// timer-floor: the floor for a decision at the end of a window, without a GPIO line: sleeps with
// clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) until each of COUNT instants PERIOD_MS apart
// (the first START_MS from now) and prints how late it woke; with --hop it also writes that line
// to a socket another process reads and stamps, as a decision that reaches a subscriber does.
// edge-floor.c does the same after a real edge; this one serves the host, which has no gpio-sim.
// Both wait with 1 ns of timer slack, as shutter's loop does (the default 50 µs lets the kernel
// fire a lone timer that much late).
//
//   timer-floor COUNT PERIOD_MS START_MS [--hop]    prints TARGET_NS WOKE_NS [ARRIVED_NS] per line
//
//   cc -O2 -o timer-floor timer-floor.c
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000000000 + now.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: timer-floor COUNT PERIOD_MS START_MS [--hop]\n");
        return 2;
    }
    char *end1, *end2, *end3;
    long count = strtol(argv[1], &end1, 10), period_ms = strtol(argv[2], &end2, 10), start_ms = strtol(argv[3], &end3, 10);
    if (*end1 || *end2 || *end3 || count <= 0 || period_ms <= 0 || start_ms < 0 || (argc > 4 && strcmp(argv[4], "--hop") != 0) || argc > 5) {
        fprintf(stderr, "timer-floor: COUNT and PERIOD_MS must be positive whole numbers, START_MS one ≥ 0, then only --hop\n");
        return 2;
    }
    long long period = (long long)period_ms * 1000000, start = now_ns() + (long long)start_ms * 1000000;
    int hop = argc > 4;
    int pair[2] = { -1, -1 };
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL) != 0) { perror("timer-floor: prctl"); return 1; }
    if (hop) {
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair) < 0) { perror("timer-floor: socketpair"); return 1; }
        if (fork() == 0) {  // the other process: stamps each line as its read returns
            close(pair[0]);
            char line[128];
            ssize_t got;
            while ((got = read(pair[1], line, sizeof line - 1)) > 0) {
                long long arrived = now_ns();
                line[got] = 0;
                char *end = strchr(line, '\n');
                if (end) *end = 0;
                printf("%s %lld\n", line, arrived);
            }
            return 0;
        }
        close(pair[1]);
    }
    for (int i = 0; i < count; i++) {
        long long target = start + i * period;
        struct timespec at = { .tv_sec = target / 1000000000, .tv_nsec = target % 1000000000 };
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) != 0) {}
        long long woke = now_ns();
        if (hop) {
            char line[64];
            int length = snprintf(line, sizeof line, "%lld %lld\n", target, woke);
            if (write(pair[0], line, (size_t)length) < 0) { perror("timer-floor: write"); return 1; }
        } else {
            printf("%lld %lld\n", target, woke);
        }
    }
    if (hop) {
        close(pair[0]);
        wait(NULL);
    }
    return 0;
}
