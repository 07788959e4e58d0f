#ifndef SHUTTER_GPIOD_H
#define SHUTTER_GPIOD_H
// One stable interface over libgpiod 1.6 (Debian 12, Raspberry Pi OS bookworm) and
// libgpiod 2.x (Debian 13, Raspberry Pi OS trixie). backend.c picks the API with
// #if on the header it is compiled against; Swift only ever sees this file.
// Every function that fails returns NULL or -1 and leaves the reason in errno.

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The libgpiod major version the backend was compiled against: 1 or 2.
int shutter_gpiod_header_major(void);

/// The version string of the libgpiod loaded at run time ("1.6.3", "2.2.1").
const char *shutter_gpiod_runtime_version(void);

typedef struct shutter_gpiod_chip shutter_gpiod_chip;

/// Opens the chip at `path` (/dev/gpiochipN). NULL and errno on failure.
shutter_gpiod_chip *shutter_gpiod_chip_open(const char *path);
void shutter_gpiod_chip_close(shutter_gpiod_chip *chip);
/// The kernel's name for the chip (gpiochip4); valid until the chip is closed.
const char *shutter_gpiod_chip_name(shutter_gpiod_chip *chip);
/// The chip's label (pinctrl-rp1); valid until the chip is closed.
const char *shutter_gpiod_chip_label(shutter_gpiod_chip *chip);
unsigned int shutter_gpiod_chip_num_lines(shutter_gpiod_chip *chip);

/// What the kernel says of one line.
typedef struct {
    char name[64];      // empty when the line has no name
    char consumer[64];  // empty when unused or unnamed consumer
    int used;           // requested by someone (us included)
    int output;         // configured as an output
} shutter_gpiod_line_info;

/// Fills `info` for the line at `offset`. 0, or -1 and errno.
int shutter_gpiod_chip_line_info(shutter_gpiod_chip *chip, unsigned int offset, shutter_gpiod_line_info *info);

/// The offset of the line named `name`, or -1 (errno ENOENT when no line has it).
int shutter_gpiod_chip_find_line(shutter_gpiod_chip *chip, const char *name);

/// Pull resistor; the values are the backend's own, not either libgpiod's.
enum {
    SHUTTER_GPIOD_BIAS_AS_IS = 0,
    SHUTTER_GPIOD_BIAS_DISABLED = 1,
    SHUTTER_GPIOD_BIAS_PULL_UP = 2,
    SHUTTER_GPIOD_BIAS_PULL_DOWN = 3,
};

/// One input line to request for both-edge events.
typedef struct {
    unsigned int offset;
    int active_low;
    int bias;                      // SHUTTER_GPIOD_BIAS_*
    unsigned int debounce_us;      // asked of the kernel where it can (2.x); 0 = none
} shutter_gpiod_input_config;

typedef struct shutter_gpiod_request shutter_gpiod_request;

/// Requests `count` input lines for both-edge events with CLOCK_MONOTONIC timestamps.
/// NULL and errno on failure; `*failed_index` is then the line that failed, or -1.
shutter_gpiod_request *shutter_gpiod_request_inputs(shutter_gpiod_chip *chip, const char *consumer,
                                                    const shutter_gpiod_input_config *lines, size_t count,
                                                    int *failed_index);

/// Requests one output line at `value` (1 = active).
shutter_gpiod_request *shutter_gpiod_request_output(shutter_gpiod_chip *chip, const char *consumer,
                                                    unsigned int offset, int active_low, int value);
int shutter_gpiod_request_set_value(shutter_gpiod_request *request, int value);

void shutter_gpiod_request_release(shutter_gpiod_request *request);

/// Whether the kernel debounces line `index` of the request (2.x with a debounce period).
int shutter_gpiod_request_kernel_debounced(shutter_gpiod_request *request, size_t index);

/// How many file descriptors to poll: 1 with 2.x, one a line with 1.6.
size_t shutter_gpiod_request_fd_count(shutter_gpiod_request *request);
int shutter_gpiod_request_fd(shutter_gpiod_request *request, size_t fd_index);

/// Reads the logical level of every requested line into `values` (count entries).
int shutter_gpiod_request_get_values(shutter_gpiod_request *request, int *values);

/// One edge, as the kernel stamped it.
typedef struct {
    uint64_t timestamp_ns;   // CLOCK_MONOTONIC
    unsigned int index;      // position of the line in the request
    int rising;              // 1: went active (after active-low), 0: went inactive
    unsigned long line_seqno;    // 2.x: per-line sequence number; 1.6: 0
    unsigned long global_seqno;  // 2.x: per-request sequence number; 1.6: 0
} shutter_gpiod_edge;

/// Reads the edges waiting on descriptor `fd_index` without blocking.
/// Returns how many were stored (0 when none are waiting), or -1 and errno.
int shutter_gpiod_request_read_edges(shutter_gpiod_request *request, size_t fd_index,
                                     shutter_gpiod_edge *edges, size_t max_edges);

#ifdef __cplusplus
}
#endif
#endif
