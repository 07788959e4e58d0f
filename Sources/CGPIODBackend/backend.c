// The libgpiod backend: the only code that calls gpiod_*. One file, two APIs.
//
// libgpiod 1.6's gpiod.h defines GPIOD_LINE_BULK_MAX_LINES; 2.x has no bulk objects
// and does not. Everything above this file is the same for both.

#define _GNU_SOURCE
#include "shutter_gpiod.h"

#include <gpiod.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef GPIOD_LINE_BULK_MAX_LINES
#define SHUTTER_GPIOD_V1 1
#else
#define SHUTTER_GPIOD_V2 1
#endif

static void copy_string(char *destination, size_t size, const char *source) {
    if (source == NULL) source = "";
    snprintf(destination, size, "%s", source);
}

static int set_nonblocking(int fd) {
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0) return -1;
    return fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

#ifdef SHUTTER_GPIOD_V1
// ---------------------------------------------------------------------------------
// libgpiod 1.6: one request (and one event descriptor) a line; no kernel debounce,
// no sequence numbers. Lines are requested one by one because a bulk request
// applies one set of flags to every line, and lines differ in bias and active-low.

struct shutter_gpiod_chip {
    struct gpiod_chip *chip;
};

struct shutter_gpiod_request {
    size_t count;
    struct gpiod_line **lines;
    int *fds;
    int output;
};

int shutter_gpiod_header_major(void) { return 1; }

const char *shutter_gpiod_runtime_version(void) { return gpiod_version_string(); }

shutter_gpiod_chip *shutter_gpiod_chip_open(const char *path) {
    struct gpiod_chip *chip = gpiod_chip_open(path);
    if (chip == NULL) return NULL;
    shutter_gpiod_chip *wrapper = calloc(1, sizeof *wrapper);
    if (wrapper == NULL) { gpiod_chip_close(chip); errno = ENOMEM; return NULL; }
    wrapper->chip = chip;
    return wrapper;
}

void shutter_gpiod_chip_close(shutter_gpiod_chip *chip) {
    if (chip == NULL) return;
    gpiod_chip_close(chip->chip);
    free(chip);
}

const char *shutter_gpiod_chip_name(shutter_gpiod_chip *chip) { return gpiod_chip_name(chip->chip); }
const char *shutter_gpiod_chip_label(shutter_gpiod_chip *chip) { return gpiod_chip_label(chip->chip); }
unsigned int shutter_gpiod_chip_num_lines(shutter_gpiod_chip *chip) { return gpiod_chip_num_lines(chip->chip); }

int shutter_gpiod_chip_line_info(shutter_gpiod_chip *chip, unsigned int offset, shutter_gpiod_line_info *info) {
    struct gpiod_line *line = gpiod_chip_get_line(chip->chip, offset);
    if (line == NULL) return -1;
    gpiod_line_update(line);
    copy_string(info->name, sizeof info->name, gpiod_line_name(line));
    copy_string(info->consumer, sizeof info->consumer, gpiod_line_consumer(line));
    info->used = gpiod_line_is_used(line);
    info->output = gpiod_line_direction(line) == GPIOD_LINE_DIRECTION_OUTPUT;
    return 0;
}

int shutter_gpiod_chip_find_line(shutter_gpiod_chip *chip, const char *name) {
    unsigned int count = gpiod_chip_num_lines(chip->chip);
    for (unsigned int offset = 0; offset < count; offset++) {
        struct gpiod_line *line = gpiod_chip_get_line(chip->chip, offset);
        const char *line_name = line ? gpiod_line_name(line) : NULL;
        if (line_name != NULL && strcmp(line_name, name) == 0) return (int)offset;
    }
    errno = ENOENT;
    return -1;
}

static int v1_flags(int active_low, int bias) {
    int flags = active_low ? GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW : 0;
    switch (bias) {
    case SHUTTER_GPIOD_BIAS_DISABLED: flags |= GPIOD_LINE_REQUEST_FLAG_BIAS_DISABLE; break;
    case SHUTTER_GPIOD_BIAS_PULL_UP: flags |= GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP; break;
    case SHUTTER_GPIOD_BIAS_PULL_DOWN: flags |= GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_DOWN; break;
    default: break;
    }
    return flags;
}

static shutter_gpiod_request *v1_request_new(size_t count) {
    shutter_gpiod_request *request = calloc(1, sizeof *request);
    if (request == NULL) return NULL;
    request->lines = calloc(count, sizeof *request->lines);
    request->fds = calloc(count, sizeof *request->fds);
    if (request->lines == NULL || request->fds == NULL) {
        free(request->lines); free(request->fds); free(request);
        return NULL;
    }
    return request;
}

void shutter_gpiod_request_release(shutter_gpiod_request *request) {
    if (request == NULL) return;
    for (size_t i = 0; i < request->count; i++) gpiod_line_release(request->lines[i]);
    free(request->lines);
    free(request->fds);
    free(request);
}

shutter_gpiod_request *shutter_gpiod_request_inputs(shutter_gpiod_chip *chip, const char *consumer,
                                                    const shutter_gpiod_input_config *lines, size_t count,
                                                    int *failed_index) {
    *failed_index = -1;
    shutter_gpiod_request *request = v1_request_new(count);
    if (request == NULL) { errno = ENOMEM; return NULL; }
    for (size_t i = 0; i < count; i++) {
        struct gpiod_line *line = gpiod_chip_get_line(chip->chip, lines[i].offset);
        if (line == NULL ||
            gpiod_line_request_both_edges_events_flags(line, consumer, v1_flags(lines[i].active_low, lines[i].bias)) < 0) {
            int saved = errno;
            *failed_index = (int)i;
            shutter_gpiod_request_release(request);
            errno = saved;
            return NULL;
        }
        request->lines[i] = line;
        request->count = i + 1;
        request->fds[i] = gpiod_line_event_get_fd(line);
        // Read only what is waiting: the event loop calls us after poll() said so,
        // but a spurious wake-up must not block gesture handling.
        if (request->fds[i] < 0 || set_nonblocking(request->fds[i]) < 0) {
            int saved = errno;
            *failed_index = (int)i;
            shutter_gpiod_request_release(request);
            errno = saved;
            return NULL;
        }
    }
    return request;
}

shutter_gpiod_request *shutter_gpiod_request_output(shutter_gpiod_chip *chip, const char *consumer,
                                                    unsigned int offset, int active_low, int value) {
    shutter_gpiod_request *request = v1_request_new(1);
    if (request == NULL) { errno = ENOMEM; return NULL; }
    struct gpiod_line *line = gpiod_chip_get_line(chip->chip, offset);
    if (line == NULL || gpiod_line_request_output_flags(line, consumer, v1_flags(active_low, SHUTTER_GPIOD_BIAS_AS_IS), value) < 0) {
        int saved = errno;
        shutter_gpiod_request_release(request);
        errno = saved;
        return NULL;
    }
    request->lines[0] = line;
    request->count = 1;
    request->fds[0] = -1;
    request->output = 1;
    return request;
}

int shutter_gpiod_request_set_value(shutter_gpiod_request *request, int value) {
    return gpiod_line_set_value(request->lines[0], value);
}

int shutter_gpiod_request_kernel_debounced(shutter_gpiod_request *request, size_t index) {
    (void)request; (void)index;
    return 0;   // 1.6 cannot ask the kernel to debounce
}

size_t shutter_gpiod_request_fd_count(shutter_gpiod_request *request) { return request->output ? 0 : request->count; }

int shutter_gpiod_request_fd(shutter_gpiod_request *request, size_t fd_index) { return request->fds[fd_index]; }

int shutter_gpiod_request_get_values(shutter_gpiod_request *request, int *values) {
    for (size_t i = 0; i < request->count; i++) {
        int value = gpiod_line_get_value(request->lines[i]);
        if (value < 0) return -1;
        values[i] = value;
    }
    return 0;
}

int shutter_gpiod_request_read_edges(shutter_gpiod_request *request, size_t fd_index,
                                     shutter_gpiod_edge *edges, size_t max_edges) {
    struct gpiod_line_event events[16];
    size_t stored = 0;
    while (stored < max_edges) {
        unsigned int want = (unsigned int)(max_edges - stored < 16 ? max_edges - stored : 16);
        int got = gpiod_line_event_read_fd_multiple(request->fds[fd_index], events, want);
        if (got < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) break;
            if (errno == EINTR) continue;
            return stored > 0 ? (int)stored : -1;
        }
        for (int i = 0; i < got; i++) {
            edges[stored].timestamp_ns = (uint64_t)events[i].ts.tv_sec * 1000000000u + (uint64_t)events[i].ts.tv_nsec;
            edges[stored].index = (unsigned int)fd_index;
            edges[stored].rising = events[i].event_type == GPIOD_LINE_EVENT_RISING_EDGE;
            edges[stored].line_seqno = 0;
            edges[stored].global_seqno = 0;
            stored++;
        }
        if ((unsigned int)got < want) break;
    }
    return (int)stored;
}

#else
// ---------------------------------------------------------------------------------
// libgpiod 2.x: one request for all lines with per-line settings, one descriptor,
// kernel debounce, CLOCK_MONOTONIC asked for explicitly, sequence numbers.

struct shutter_gpiod_chip {
    struct gpiod_chip *chip;
    struct gpiod_chip_info *info;
};

struct shutter_gpiod_request {
    struct gpiod_line_request *request;
    struct gpiod_edge_event_buffer *buffer;
    size_t count;
    unsigned int *offsets;
    int *kernel_debounced;
    int output;
};

int shutter_gpiod_header_major(void) { return 2; }

const char *shutter_gpiod_runtime_version(void) { return gpiod_api_version(); }

shutter_gpiod_chip *shutter_gpiod_chip_open(const char *path) {
    struct gpiod_chip *chip = gpiod_chip_open(path);
    if (chip == NULL) return NULL;
    struct gpiod_chip_info *info = gpiod_chip_get_info(chip);
    if (info == NULL) { int saved = errno; gpiod_chip_close(chip); errno = saved; return NULL; }
    shutter_gpiod_chip *wrapper = calloc(1, sizeof *wrapper);
    if (wrapper == NULL) { gpiod_chip_info_free(info); gpiod_chip_close(chip); errno = ENOMEM; return NULL; }
    wrapper->chip = chip;
    wrapper->info = info;
    return wrapper;
}

void shutter_gpiod_chip_close(shutter_gpiod_chip *chip) {
    if (chip == NULL) return;
    gpiod_chip_info_free(chip->info);
    gpiod_chip_close(chip->chip);
    free(chip);
}

const char *shutter_gpiod_chip_name(shutter_gpiod_chip *chip) { return gpiod_chip_info_get_name(chip->info); }
const char *shutter_gpiod_chip_label(shutter_gpiod_chip *chip) { return gpiod_chip_info_get_label(chip->info); }
unsigned int shutter_gpiod_chip_num_lines(shutter_gpiod_chip *chip) {
    return (unsigned int)gpiod_chip_info_get_num_lines(chip->info);
}

int shutter_gpiod_chip_line_info(shutter_gpiod_chip *chip, unsigned int offset, shutter_gpiod_line_info *info) {
    struct gpiod_line_info *line = gpiod_chip_get_line_info(chip->chip, offset);
    if (line == NULL) return -1;
    copy_string(info->name, sizeof info->name, gpiod_line_info_get_name(line));
    copy_string(info->consumer, sizeof info->consumer, gpiod_line_info_get_consumer(line));
    info->used = gpiod_line_info_is_used(line);
    info->output = gpiod_line_info_get_direction(line) == GPIOD_LINE_DIRECTION_OUTPUT;
    gpiod_line_info_free(line);
    return 0;
}

int shutter_gpiod_chip_find_line(shutter_gpiod_chip *chip, const char *name) {
    return gpiod_chip_get_line_offset_from_name(chip->chip, name);
}

static enum gpiod_line_bias v2_bias(int bias) {
    switch (bias) {
    case SHUTTER_GPIOD_BIAS_DISABLED: return GPIOD_LINE_BIAS_DISABLED;
    case SHUTTER_GPIOD_BIAS_PULL_UP: return GPIOD_LINE_BIAS_PULL_UP;
    case SHUTTER_GPIOD_BIAS_PULL_DOWN: return GPIOD_LINE_BIAS_PULL_DOWN;
    default: return GPIOD_LINE_BIAS_AS_IS;
    }
}

void shutter_gpiod_request_release(shutter_gpiod_request *request) {
    if (request == NULL) return;
    if (request->request) gpiod_line_request_release(request->request);
    if (request->buffer) gpiod_edge_event_buffer_free(request->buffer);
    free(request->offsets);
    free(request->kernel_debounced);
    free(request);
}

// Builds one request from per-line settings; `configure` fills the settings of line i.
static shutter_gpiod_request *v2_request(shutter_gpiod_chip *chip, const char *consumer, size_t count,
                                         const shutter_gpiod_input_config *inputs,
                                         unsigned int output_offset, int output_active_low, int output_value) {
    shutter_gpiod_request *request = calloc(1, sizeof *request);
    struct gpiod_line_config *line_config = gpiod_line_config_new();
    struct gpiod_request_config *request_config = gpiod_request_config_new();
    struct gpiod_line_settings *settings = gpiod_line_settings_new();
    int saved = ENOMEM;
    if (request == NULL || line_config == NULL || request_config == NULL || settings == NULL) goto fail;
    request->count = count;
    request->offsets = calloc(count, sizeof *request->offsets);
    request->kernel_debounced = calloc(count, sizeof *request->kernel_debounced);
    if (request->offsets == NULL || request->kernel_debounced == NULL) goto fail;

    for (size_t i = 0; i < count; i++) {
        gpiod_line_settings_reset(settings);
        if (inputs != NULL) {
            request->offsets[i] = inputs[i].offset;
            gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_INPUT);
            gpiod_line_settings_set_edge_detection(settings, GPIOD_LINE_EDGE_BOTH);
            gpiod_line_settings_set_bias(settings, v2_bias(inputs[i].bias));
            gpiod_line_settings_set_active_low(settings, inputs[i].active_low != 0);
            // Edges are matched against camera frames, which V4L2 stamps on CLOCK_MONOTONIC.
            gpiod_line_settings_set_event_clock(settings, GPIOD_LINE_CLOCK_MONOTONIC);
            if (inputs[i].debounce_us > 0) {
                gpiod_line_settings_set_debounce_period_us(settings, inputs[i].debounce_us);
                request->kernel_debounced[i] = 1;
            }
        } else {
            request->offsets[i] = output_offset;
            request->output = 1;
            gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_OUTPUT);
            gpiod_line_settings_set_active_low(settings, output_active_low != 0);
            gpiod_line_settings_set_output_value(settings, output_value ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE);
        }
        if (gpiod_line_config_add_line_settings(line_config, &request->offsets[i], 1, settings) < 0) {
            saved = errno;
            goto fail;
        }
    }
    gpiod_request_config_set_consumer(request_config, consumer);
    if (inputs != NULL) {
        // The kernel keeps 16 events a line by default; a swipe across many pads, or a
        // burst of bounce, needs room for every line at once.
        size_t capacity = count * 64;
        gpiod_request_config_set_event_buffer_size(request_config, capacity);
        request->buffer = gpiod_edge_event_buffer_new(capacity);
        if (request->buffer == NULL) goto fail;
    }
    request->request = gpiod_chip_request_lines(chip->chip, request_config, line_config);
    if (request->request == NULL) { saved = errno; goto fail; }
    if (inputs != NULL && set_nonblocking(gpiod_line_request_get_fd(request->request)) < 0) { saved = errno; goto fail; }

    gpiod_line_settings_free(settings);
    gpiod_request_config_free(request_config);
    gpiod_line_config_free(line_config);
    return request;

fail:
    if (settings) gpiod_line_settings_free(settings);
    if (request_config) gpiod_request_config_free(request_config);
    if (line_config) gpiod_line_config_free(line_config);
    shutter_gpiod_request_release(request);
    errno = saved;
    return NULL;
}

shutter_gpiod_request *shutter_gpiod_request_inputs(shutter_gpiod_chip *chip, const char *consumer,
                                                    const shutter_gpiod_input_config *lines, size_t count,
                                                    int *failed_index) {
    // 2.x requests all lines at once, so a failure cannot be pinned on one line here;
    // the Swift side looks at each line's info to say which one is busy.
    *failed_index = -1;
    return v2_request(chip, consumer, count, lines, 0, 0, 0);
}

shutter_gpiod_request *shutter_gpiod_request_output(shutter_gpiod_chip *chip, const char *consumer,
                                                    unsigned int offset, int active_low, int value) {
    return v2_request(chip, consumer, 1, NULL, offset, active_low, value);
}

int shutter_gpiod_request_set_value(shutter_gpiod_request *request, int value) {
    return gpiod_line_request_set_value(request->request, request->offsets[0],
                                        value ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE);
}

int shutter_gpiod_request_kernel_debounced(shutter_gpiod_request *request, size_t index) {
    return index < request->count ? request->kernel_debounced[index] : 0;
}

size_t shutter_gpiod_request_fd_count(shutter_gpiod_request *request) { return request->output ? 0 : 1; }

int shutter_gpiod_request_fd(shutter_gpiod_request *request, size_t fd_index) {
    (void)fd_index;
    return gpiod_line_request_get_fd(request->request);
}

int shutter_gpiod_request_get_values(shutter_gpiod_request *request, int *values) {
    enum gpiod_line_value *raw = calloc(request->count, sizeof *raw);
    if (raw == NULL) { errno = ENOMEM; return -1; }
    int result = gpiod_line_request_get_values(request->request, raw);
    for (size_t i = 0; result == 0 && i < request->count; i++) values[i] = raw[i] == GPIOD_LINE_VALUE_ACTIVE;
    free(raw);
    return result;
}

int shutter_gpiod_request_read_edges(shutter_gpiod_request *request, size_t fd_index,
                                     shutter_gpiod_edge *edges, size_t max_edges) {
    (void)fd_index;
    size_t stored = 0;
    size_t capacity = gpiod_edge_event_buffer_get_capacity(request->buffer);
    while (stored < max_edges) {
        size_t want = max_edges - stored < capacity ? max_edges - stored : capacity;
        int got = gpiod_line_request_read_edge_events(request->request, request->buffer, want);
        if (got < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) break;
            if (errno == EINTR) continue;
            return stored > 0 ? (int)stored : -1;
        }
        for (int i = 0; i < got; i++) {
            struct gpiod_edge_event *event = gpiod_edge_event_buffer_get_event(request->buffer, (unsigned long)i);
            unsigned int offset = gpiod_edge_event_get_line_offset(event);
            unsigned int index = 0;
            while (index < request->count && request->offsets[index] != offset) index++;
            edges[stored].timestamp_ns = gpiod_edge_event_get_timestamp_ns(event);
            edges[stored].index = index;
            edges[stored].rising = gpiod_edge_event_get_event_type(event) == GPIOD_EDGE_EVENT_RISING_EDGE;
            edges[stored].line_seqno = gpiod_edge_event_get_line_seqno(event);
            edges[stored].global_seqno = gpiod_edge_event_get_global_seqno(event);
            stored++;
        }
        if ((size_t)got < want) break;
    }
    return (int)stored;
}
#endif
