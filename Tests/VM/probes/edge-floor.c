// edge-floor: the floor for "edge → event", the least any program on libgpiod can do.
//
//   edge-floor CHIP OFFSET [--window MS [--hop]] [--count N]
//
// Watches one line for both edges and prints, one line per edge (line-buffered):
//   EDGE KERNEL_NS GOT_NS            EDGE is r or f; KERNEL_NS the kernel's timestamp of the
//                                    edge, GOT_NS CLOCK_MONOTONIC when the read returned it
//   EDGE KERNEL_NS GOT_NS WOKE_NS    with --window: after each edge, sleeps with
//                                    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) until
//                                    KERNEL_NS + MS and stamps when it woke: WOKE_NS - KERNEL_NS - MS
//                                    is how late a decision at the end of a window can be, at best
//   EDGE KERNEL_NS GOT_NS WOKE_NS ARRIVED_NS
//                                    with --hop too: on waking it writes the line to a Unix socket
//                                    and a child process stamps it on arrival, the floor for a
//                                    decision that reaches another process (a subscriber)
// and exits after N edges (default: never). CHIP is a path or a name under /dev (gpiochip0).
// The timer waits with 1 ns of timer slack (PR_SET_TIMERSLACK), as shutter's loop does: with the
// default 50 µs the kernel may fire a lone timer up to 50 µs late, and a floor must be the least
// a program can do, not the default.
// The kernel stamps edges on CLOCK_MONOTONIC (uAPI v1 since Linux 5.7, v2's default), the
// clock `shutter`'s pressedAt is on. Builds against libgpiod 1.6 and 2.x (as
// Sources/CGPIODBackend does, on GPIOD_LINE_BULK_MAX_LINES, which only 1.6 defines):
//   cc -O2 -o edge-floor edge-floor.c -lgpiod
#define _GNU_SOURCE
#include <gpiod.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/// With --hop: the socket the parent writes each line into (-1 without).
static int hop = -1;

/// The child of --hop: prints each line it reads with the time it arrived.
static void stamp_arrivals(int from) {
    char line[256];
    FILE *in = fdopen(from, "r");
    setvbuf(stdout, NULL, _IOLBF, 0);
    while (fgets(line, sizeof line, in)) {
        int64_t arrived = now_ns();
        line[strcspn(line, "\n")] = 0;
        printf("%s %lld\n", line, (long long)arrived);
    }
    exit(0);
}

static void report(int rising, int64_t kernel_ns, int64_t got_ns, int64_t window_ns) {
    if (window_ns < 0) {
        printf("%c %lld %lld\n", rising ? 'r' : 'f', (long long)kernel_ns, (long long)got_ns);
        return;
    }
    int64_t due = kernel_ns + window_ns;
    struct timespec at = { .tv_sec = due / 1000000000, .tv_nsec = due % 1000000000 };
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) != 0) {}
    int64_t woke = now_ns();
    if (hop >= 0) {
        char line[128];
        int length = snprintf(line, sizeof line, "%c %lld %lld %lld\n", rising ? 'r' : 'f', (long long)kernel_ns, (long long)got_ns, (long long)woke);
        if (write(hop, line, (size_t)length) != length) perror("edge-floor: hop");
        return;
    }
    printf("%c %lld %lld %lld\n", rising ? 'r' : 'f', (long long)kernel_ns, (long long)got_ns, (long long)woke);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: edge-floor CHIP OFFSET [--window MS [--hop]] [--count N]\n");
        return 2;
    }
    char path[256];
    snprintf(path, sizeof path, argv[1][0] == '/' ? "%s" : "/dev/%s", argv[1]);
    unsigned int offset = (unsigned int)strtoul(argv[2], NULL, 10);
    int64_t window_ns = -1;
    long count = -1;
    int hops = 0;
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "--hop") == 0) hops = 1;
        else if (strcmp(argv[i], "--window") == 0 && i + 1 < argc) window_ns = (int64_t)(atof(argv[++i]) * 1e6);
        else if (strcmp(argv[i], "--count") == 0 && i + 1 < argc) count = atol(argv[++i]);
        else { fprintf(stderr, "edge-floor: unknown option %s\n", argv[i]); return 2; }
    }
    if (window_ns >= 0 && prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL) != 0) { perror("edge-floor: prctl"); return 1; }
    if (hops && window_ns >= 0) {
        int ends[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, ends) < 0) { perror("edge-floor: socketpair"); return 1; }
        if (fork() == 0) { close(ends[0]); stamp_arrivals(ends[1]); }
        close(ends[1]);
        hop = ends[0];
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
#ifdef GPIOD_LINE_BULK_MAX_LINES
    struct gpiod_chip *chip = gpiod_chip_open(path);
    struct gpiod_line *line = chip ? gpiod_chip_get_line(chip, offset) : NULL;
    if (!line || gpiod_line_request_both_edges_events(line, "edge-floor") < 0) {
        perror("edge-floor: cannot watch the line");
        return 1;
    }
    for (long seen = 0; count < 0 || seen < count; seen++) {
        struct gpiod_line_event event;
        if (gpiod_line_event_read(line, &event) < 0) { perror("edge-floor: read"); return 1; }
        int64_t got = now_ns();
        int64_t kernel = (int64_t)event.ts.tv_sec * 1000000000 + event.ts.tv_nsec;
        report(event.event_type == GPIOD_LINE_EVENT_RISING_EDGE, kernel, got, window_ns);
    }
#else
    struct gpiod_chip *chip = gpiod_chip_open(path);
    struct gpiod_line_settings *settings = gpiod_line_settings_new();
    struct gpiod_line_config *config = gpiod_line_config_new();
    struct gpiod_request_config *request_config = gpiod_request_config_new();
    struct gpiod_line_request *request = NULL;
    if (chip && settings && config && request_config) {
        gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_INPUT);
        gpiod_line_settings_set_edge_detection(settings, GPIOD_LINE_EDGE_BOTH);
        gpiod_line_config_add_line_settings(config, &offset, 1, settings);
        gpiod_request_config_set_consumer(request_config, "edge-floor");
        request = gpiod_chip_request_lines(chip, request_config, config);
    }
    struct gpiod_edge_event_buffer *buffer = gpiod_edge_event_buffer_new(1);
    if (!request || !buffer) {
        perror("edge-floor: cannot watch the line");
        return 1;
    }
    for (long seen = 0; count < 0 || seen < count; seen++) {
        if (gpiod_line_request_read_edge_events(request, buffer, 1) < 1) { perror("edge-floor: read"); return 1; }
        int64_t got = now_ns();
        struct gpiod_edge_event *event = gpiod_edge_event_buffer_get_event(buffer, 0);
        report(gpiod_edge_event_get_event_type(event) == GPIOD_EDGE_EVENT_RISING_EDGE,
               (int64_t)gpiod_edge_event_get_timestamp_ns(event), got, window_ns);
    }
#endif
    return 0;
}
