/* uvc-feeder: the camera side of the VM's USB webcam (usb_f_uvc on dummy_hcd, built with
 * Deploy/vm/uvc/usb_f_uvc-bulk.patch), seen by the guest's real uvcvideo driver.
 *
 *   uvc-feeder --gadget CONFIGFS_FUNCTION_DIR [--controls LOG] [--frames LOG] [--slow FILE]
 *   uvc-feeder --read PHOTO.jpg        print the frame stamp a photo carries, its size, SCANHASH,
 *                                      mean grey, header markers and COM text (spaces as '_')
 *   uvc-feeder --sample WxH FILE       write one DHT-less MJPEG frame (frame 7, now), for checks
 *
 * Feeding:
 *  - reads the formats, sizes and frame intervals from the gadget's configfs function
 *    (streaming/uncompressed/<f> = YUYV, streaming/mjpeg/<f> = MJPEG), so it always answers
 *    what the gadget advertises;
 *  - answers the UVC class requests: probe/commit (GET_CUR/MIN/MAX/DEF/RES/LEN/INFO, SET_CUR),
 *    and the camera terminal's auto exposure mode, exposure time absolute and zoom absolute and
 *    the processing unit's brightness (GET_INFO/MIN/MAX/RES/DEF/CUR/LEN, SET_CUR);
 *  - logs every control SET_CUR to --controls as "NAME VALUE" (one line each);
 *  - streams at the committed frame interval (a bulk endpoint has no stream-on request: COMMIT
 *    starts the stream, a new PROBE flushes it); YUYV as is, MJPEG encoded with TurboJPEG and
 *    its DHT segments removed, as cheap webcams send it, with a COM segment carrying the stamp;
 *  - logs every frame to --frames as "FRAME TIME FOURCC WxH BYTES SCANHASH";
 *  - reopens the gadget node after a disconnect (UDC unbound) and keeps serving;
 *  - while FILE (--slow) exists, answers each probe/commit request 0.5 s late, as a slow webcam
 *    does: the host's VIDIOC_S_FMT and VIDIOC_STREAMON wait in uvcvideo for the answers (its
 *    UVC_CTRL_STREAMING_TIMEOUT is 5 s), so an open and start take seconds.
 *
 * The stamp: three rows of 32 black/white blocks near the top left (frame counter, then the
 * CLOCK_MONOTONIC time of the frame in microseconds, high and low word) that survive JPEG.
 * The picture's grey level follows brightness and, in manual exposure, the exposure time.
 * SCANHASH is the FNV-1a 64 hash of the entropy-coded data (after the SOS header, through EOI),
 * which a pass-through must keep byte for byte; --read prints the same hash for a photo. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <linux/usb/ch9.h>
#include <linux/usb/g_uvc.h>
#include <linux/usb/video.h>
#include <linux/videodev2.h>
#include <turbojpeg.h>

#define PAYLOAD 16384 /* = usb_f_uvc bulk_payload (the patch's default) */
#define NBUF 4
#define MAXFRAMES 16
#define MAXIVALS 8
/* usb_f_uvc numbers its interfaces from 0 (control) when it is the gadget's only function. */
#define STREAMING_INTERFACE 1

/* ---- what the gadget advertises -------------------------------------------------------------- */
struct mode { int format, frame, mjpeg; unsigned width, height; uint32_t ivals[MAXIVALS]; int nivals; uint32_t defival; };
static struct mode modes[MAXFRAMES];
static int nmodes;

static int read_text(const char *path, char *out, size_t n) {
	FILE *f = fopen(path, "r");
	if (!f) return -1;
	size_t got = fread(out, 1, n - 1, f);
	out[got] = 0;
	fclose(f);
	return 0;
}
static long read_number(const char *dir, const char *name) {
	char path[600], text[64];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	return read_text(path, text, sizeof text) ? -1 : strtol(text, NULL, 0);
}

/* Reads streaming/{uncompressed,mjpeg}/FORMAT/FRAME from the configfs function directory. */
static int load_modes(const char *function) {
	static const char *kinds[] = {"uncompressed", "mjpeg"};
	nmodes = 0;
	for (int k = 0; k < 2; k++) {
		char kdir[400];
		snprintf(kdir, sizeof kdir, "%s/streaming/%s", function, kinds[k]);
		DIR *d = opendir(kdir);
		struct dirent *f;
		while (d && (f = readdir(d))) {
			if (f->d_name[0] == '.') continue;
			char fdir[700];
			snprintf(fdir, sizeof fdir, "%s/%s", kdir, f->d_name);
			long format = read_number(fdir, "bFormatIndex");
			if (format <= 0) continue;
			DIR *fd = opendir(fdir);
			struct dirent *e;
			while (fd && (e = readdir(fd))) {
				char frdir[1000], text[1100];
				snprintf(frdir, sizeof frdir, "%s/%s", fdir, e->d_name);
				if (e->d_name[0] == '.' || read_number(frdir, "bFrameIndex") <= 0 || nmodes == MAXFRAMES) continue;
				struct mode *m = &modes[nmodes++];
				memset(m, 0, sizeof *m);
				m->format = format; m->mjpeg = k == 1;
				m->frame = read_number(frdir, "bFrameIndex");
				m->width = read_number(frdir, "wWidth"); m->height = read_number(frdir, "wHeight");
				m->defival = read_number(frdir, "dwDefaultFrameInterval");
				snprintf(text, sizeof text, "%s/dwFrameInterval", frdir);
				char list[512] = "";
				read_text(text, list, sizeof list);
				for (char *p = strtok(list, "\n"); p && m->nivals < MAXIVALS; p = strtok(NULL, "\n"))
					m->ivals[m->nivals++] = strtoul(p, NULL, 0);
			}
			if (fd) closedir(fd);
		}
		if (d) closedir(d);
	}
	return nmodes;
}
static struct mode *find_mode(int format, int frame) {
	for (int i = 0; i < nmodes; i++)
		if (modes[i].format == format && modes[i].frame == frame) return &modes[i];
	return NULL;
}

/* ---- logging ------------------------------------------------------------------------------------ */
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
static uint64_t now_us(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000ull + t.tv_nsec / 1000; }
#define LOG(...) do { printf("[feeder %.3f] ", now()); printf(__VA_ARGS__); fflush(stdout); } while (0)
static FILE *control_log, *frame_log;
static const char *slow_file;

/* ---- controls ------------------------------------------------------------------------------------ */
/* entity 1 = camera terminal, 2 = processing unit (usb_f_uvc's fixed layout). */
struct ctl { const char *name; int entity, selector, length; int32_t min, max, res, def, cur; };
static struct ctl ctls[] = {
	/* auto exposure mode: a bitmap; RES says which modes exist: 1 manual, 8 aperture priority */
	{"auto_exposure", 1, UVC_CT_AE_MODE_CONTROL, 1, 0, 0xff, 0x09, 0x08, 0x08},
	/* exposure time in 100 µs units */
	{"exposure_time_absolute", 1, UVC_CT_EXPOSURE_TIME_ABSOLUTE_CONTROL, 4, 3, 2047, 1, 156, 156},
	{"zoom_absolute", 1, UVC_CT_ZOOM_ABSOLUTE_CONTROL, 2, 100, 500, 1, 100, 100},
	{"brightness", 2, UVC_PU_BRIGHTNESS_CONTROL, 2, -64, 64, 1, 0, 0},
};
#define NCTLS (int)(sizeof ctls / sizeof ctls[0])
static struct ctl *find_ctl(int entity, int selector) {
	for (int i = 0; i < NCTLS; i++)
		if (ctls[i].entity == entity && ctls[i].selector == selector) return &ctls[i];
	return NULL;
}
static int32_t ctl_value(const char *name) {
	for (int i = 0; i < NCTLS; i++)
		if (!strcmp(ctls[i].name, name)) return ctls[i].cur;
	return 0;
}

/* ---- the picture --------------------------------------------------------------------------------- */
/* Block size of the stamp for a frame width: a multiple of 8 so blocks fill whole JPEG blocks. */
static unsigned block_size(unsigned width) { unsigned b = (width / 48) & ~7u; return b < 8 ? 8 : b; }
/* The grey level the controls ask for: brightness shifts it, a manual exposure scales it. */
static int grey_level(void) {
	double level = 110;
	if (ctl_value("auto_exposure") == 1) level *= ctl_value("exposure_time_absolute") / 156.0;
	level += ctl_value("brightness");
	return level < 40 ? 40 : level > 200 ? 200 : (int)level;
}
/* The height of the top strip that changes from frame to frame (stamp and moving bar): 8 blocks. */
static unsigned strip_height(unsigned width, unsigned height) { unsigned s = 8 * block_size(width); return s > height ? height : s; }
/* Draws the frame into planar 4:2:2 Y, U, V (all of it, or only its first `rows` rows). */
static void draw_rows(uint8_t *y, uint8_t *u, uint8_t *v, unsigned w, unsigned h, unsigned rows, uint32_t frame, uint64_t time_us) {
	int grey = grey_level();
	unsigned b = block_size(w), bar = (frame * 8) % w;
	for (unsigned r = 0; r < rows; r++) memset(y + (size_t)r * w, grey, w);
	/* a bar moving along the strip's bottom, so a live view shows the stream running */
	for (unsigned r = 13 * b / 2; r < 15 * b / 2 && r < rows && r < h; r++)
		for (unsigned x = bar; x < bar + w / 16 && x < w; x++) y[(size_t)r * w + x] = 235;
	memset(u, 128, (size_t)w / 2 * rows);
	memset(v, 128, (size_t)w / 2 * rows);
	uint32_t words[3] = {frame, (uint32_t)(time_us >> 32), (uint32_t)time_us};
	for (int row = 0; row < 3; row++)
		for (int bit = 0; bit < 32; bit++) {
			uint8_t level = (words[row] >> (31 - bit)) & 1 ? 235 : 16;
			unsigned x0 = b + bit * b, y0 = b + row * 2 * b;
			if (x0 + b > w || y0 + b > rows) continue;
			for (unsigned yy = y0; yy < y0 + b; yy++) memset(y + (size_t)yy * w + x0, level, b);
		}
}
static void draw(uint8_t *y, uint8_t *u, uint8_t *v, unsigned w, unsigned h, uint32_t frame, uint64_t time_us) {
	draw_rows(y, u, v, w, h, h, frame, time_us);
}
/* Reads the stamp back from a grey image. */
static void read_stamp(const uint8_t *grey, unsigned w, uint32_t *frame, uint64_t *time_us) {
	unsigned b = block_size(w);
	uint32_t words[3] = {0, 0, 0};
	for (int row = 0; row < 3; row++)
		for (int bit = 0; bit < 32; bit++) {
			unsigned cx = b + bit * b + b / 2, cy = b + row * 2 * b + b / 2;
			words[row] = words[row] << 1 | (grey[(size_t)cy * w + cx] > 128);
		}
	*frame = words[0];
	*time_us = (uint64_t)words[1] << 32 | words[2];
}

/* ---- JPEG: the scan data's hash, and the DHT-less MJPEG frame ------------------------------------- */
/* Index after the SOS segment (where the entropy-coded data starts), or 0. */
static size_t scan_start(const uint8_t *j, size_t n) {
	size_t i = 2;
	while (i + 4 <= n && j[i] == 0xFF) {
		uint8_t marker = j[i + 1];
		size_t length = (size_t)j[i + 2] << 8 | j[i + 3];
		if (marker == 0xDA) return i + 2 + length;
		i += 2 + length;
	}
	return 0;
}
static uint64_t scan_hash(const uint8_t *j, size_t n) {
	size_t start = scan_start(j, n), end = n;
	while (end > start + 2 && !(j[end - 2] == 0xFF && j[end - 1] == 0xD9)) end--; /* padding after EOI */
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = start; start && i < end; i++) h = (h ^ j[i]) * 0x100000001b3ull;
	return h;
}
/* Copies `src` to `dst` without DHT segments and with a COM segment after SOI; returns the length. */
static size_t strip_dht(const uint8_t *src, size_t n, uint8_t *dst, size_t cap, const char *comment) {
	size_t o = 0, i = 2, clen = strlen(comment);
	if (n < 4 || cap < n + clen + 4) return 0;
	dst[o++] = 0xFF; dst[o++] = 0xD8;
	dst[o++] = 0xFF; dst[o++] = 0xFE; dst[o++] = (clen + 2) >> 8; dst[o++] = (clen + 2) & 0xFF;
	memcpy(dst + o, comment, clen); o += clen;
	while (i + 4 <= n && src[i] == 0xFF) {
		uint8_t marker = src[i + 1];
		size_t length = (size_t)src[i + 2] << 8 | src[i + 3];
		if (marker == 0xDA) break;
		if (marker != 0xC4) { memcpy(dst + o, src + i, 2 + length); o += 2 + length; }
		i += 2 + length;
	}
	memcpy(dst + o, src + i, n - i);
	return o + n - i;
}

/* The start of the `n`th restart marker (counting from 1) in entropy-coded data, or 0. */
static size_t nth_restart(const uint8_t *j, size_t from, size_t to, unsigned n) {
	for (size_t i = from; i + 1 < to; i++)
		if (j[i] == 0xFF && j[i + 1] >= 0xD0 && j[i + 1] <= 0xD7 && --n == 0) return i;
	return 0;
}

struct mode;
static size_t encode_mjpeg(const struct mode *m, uint8_t *out, size_t cap, const char *comment, uint64_t stamp);

/* ---- streaming ----------------------------------------------------------------------------------- */
static int fd = -1, streaming, nbufs, queued[NBUF];
static void *bufmem[NBUF];
static size_t buflen[NBUF];
static struct uvc_streaming_control probe, commit;
static int setup_selector, setup_interface, setup_entity; /* the SET_CUR whose data comes next */
static uint32_t frames;
static double next_due, stream_started;
static uint8_t *planes[3];
static tjhandle encoder;

static uint32_t nearest_interval(const struct mode *m, uint32_t asked) {
	if (!m->nivals) return m->defival;
	uint32_t best = m->ivals[0];
	for (int i = 1; i < m->nivals; i++)
		if (labs((long)m->ivals[i] - (long)asked) < labs((long)best - (long)asked)) best = m->ivals[i];
	return best;
}
static void fill_streaming(struct uvc_streaming_control *c, int format, int frame, uint32_t interval) {
	struct mode *m = find_mode(format, frame);
	if (!m) m = &modes[0];
	memset(c, 0, sizeof *c);
	c->bmHint = 1; c->bFormatIndex = m->format; c->bFrameIndex = m->frame;
	c->dwFrameInterval = nearest_interval(m, interval ? interval : m->defival);
	c->dwMaxVideoFrameSize = m->width * m->height * 2;
	c->dwMaxPayloadTransferSize = PAYLOAD;
	c->bmFramingInfo = 3; c->bPreferedVersion = 1; c->bMaxVersion = 1;
}

/* Encodes the current frame as MJPEG without DHT. Under emulation a whole 1280x720 encode per
 * frame costs more than a frame interval, so the frame is encoded with a restart marker after
 * every MCU row (TJ_RESTART=1): the still part is encoded once (again when the controls change
 * its grey level), and per frame only the top strip with the stamp, whose entropy-coded rows
 * replace the still frame's first rows (a restart resets the DC predictors, so rows splice). */
static size_t encode_mjpeg(const struct mode *m, uint8_t *out, size_t cap, const char *comment, uint64_t stamp) {
	static uint8_t *still; static size_t still_len; static unsigned still_w, still_h; static int still_grey = -1;
	unsigned w = m->width, h = m->height, rows = strip_height(w, h);
	int strides[3] = {(int)w, (int)w / 2, (int)w / 2};
	unsigned char *jpeg = NULL;
	unsigned long size = 0;
	if (!still || still_w != w || still_h != h || still_grey != grey_level()) {
		draw(planes[0], planes[1], planes[2], w, h, frames, 0);
		if (tjCompressFromYUVPlanes(encoder, (const unsigned char **)planes, w, strides, h, TJSAMP_422, &jpeg, &size, 85, TJFLAG_FASTDCT) < 0) {
			LOG("encode: %s\n", tjGetErrorStr2(encoder));
			return 0;
		}
		free(still);
		still = malloc(size);
		memcpy(still, jpeg, size);
		still_len = size; still_w = w; still_h = h; still_grey = grey_level();
		tjFree(jpeg);
		jpeg = NULL;
	}
	draw_rows(planes[0], planes[1], planes[2], w, h, rows, frames, stamp);
	if (tjCompressFromYUVPlanes(encoder, (const unsigned char **)planes, w, strides, rows, TJSAMP_422, &jpeg, &size, 85, TJFLAG_FASTDCT) < 0) {
		LOG("encode: %s\n", tjGetErrorStr2(encoder));
		return 0;
	}
	/* still header (without DHT) + the strip's rows + the still frame from its (rows/8)th restart on */
	size_t head = strip_dht(still, scan_start(still, still_len), out, cap, comment);
	size_t strip_scan = scan_start(jpeg, size), strip_end = size - 2; /* before EOI */
	size_t resume = nth_restart(still, scan_start(still, still_len), still_len, rows / 8);
	size_t used = 0;
	if (head && strip_scan && resume && head + (strip_end - strip_scan) + (still_len - resume) <= cap) {
		memcpy(out + head, jpeg + strip_scan, strip_end - strip_scan);
		memcpy(out + head + (strip_end - strip_scan), still + resume, still_len - resume);
		used = head + (strip_end - strip_scan) + (still_len - resume);
	}
	tjFree(jpeg);
	return used;
}

static void stop_stream(void) {
	if (!streaming && !nbufs) return;
	int type = V4L2_BUF_TYPE_VIDEO_OUTPUT;
	ioctl(fd, VIDIOC_STREAMOFF, &type);
	for (int i = 0; i < nbufs; i++) munmap(bufmem[i], buflen[i]);
	struct v4l2_requestbuffers rb = {.count = 0, .type = type, .memory = V4L2_MEMORY_MMAP};
	ioctl(fd, VIDIOC_REQBUFS, &rb);
	double took = now() - stream_started;
	LOG("stream stopped after %u frames in %.2f s (%.2f fps)\n", frames, took, took > 0 ? frames / took : 0);
	streaming = nbufs = 0;
}

static int fill_and_queue(int i) {
	struct mode *m = find_mode(commit.bFormatIndex, commit.bFrameIndex);
	unsigned w = m->width, h = m->height;
	uint64_t stamp = now_us();
	uint8_t *out = bufmem[i];
	size_t used = 0;
	if (m->mjpeg) {
		char comment[96];
		snprintf(comment, sizeof comment, "shutter-uvc-feeder frame=%u time=%llu.%06llu", frames,
		         (unsigned long long)(stamp / 1000000), (unsigned long long)(stamp % 1000000));
		used = encode_mjpeg(m, out, buflen[i], comment, stamp);
		if (!used) { LOG("frame %u: encoding failed or does not fit the buffer\n", frames); return -1; }
		} else {
		draw(planes[0], planes[1], planes[2], w, h, frames, stamp);
		used = (size_t)w * h * 2;
		for (size_t r = 0; r < h; r++)
			for (size_t x = 0; x < w; x += 2) {
				uint8_t *p = out + (r * w + x) * 2;
				p[0] = planes[0][r * w + x]; p[1] = planes[1][r * w / 2 + x / 2];
				p[2] = planes[0][r * w + x + 1]; p[3] = planes[2][r * w / 2 + x / 2];
			}
	}
	struct v4l2_buffer b = {.index = i, .type = V4L2_BUF_TYPE_VIDEO_OUTPUT, .memory = V4L2_MEMORY_MMAP, .bytesused = used};
	if (ioctl(fd, VIDIOC_QBUF, &b) < 0) { LOG("QBUF: %s\n", strerror(errno)); return -1; }
	if (frame_log) {
		fprintf(frame_log, "%u %llu.%06llu %s %ux%u %zu %016llx\n", frames, (unsigned long long)(stamp / 1000000),
		        (unsigned long long)(stamp % 1000000), m->mjpeg ? "MJPG" : "YUYV", w, h, used,
		        m->mjpeg ? (unsigned long long)scan_hash(out, used) : 0ull);
		fflush(frame_log);
	}
	queued[i] = 1;
	frames++;
	return 0;
}

static void start_stream(void) {
	stop_stream();
	struct mode *m = find_mode(commit.bFormatIndex, commit.bFrameIndex);
	if (!m) { LOG("commit names no mode (format %d frame %d)\n", commit.bFormatIndex, commit.bFrameIndex); return; }
	struct v4l2_format fmt = {.type = V4L2_BUF_TYPE_VIDEO_OUTPUT};
	fmt.fmt.pix.width = m->width; fmt.fmt.pix.height = m->height;
	fmt.fmt.pix.pixelformat = m->mjpeg ? V4L2_PIX_FMT_MJPEG : V4L2_PIX_FMT_YUYV;
	fmt.fmt.pix.sizeimage = commit.dwMaxVideoFrameSize;
	if (ioctl(fd, VIDIOC_S_FMT, &fmt) < 0) { LOG("S_FMT: %s\n", strerror(errno)); return; }
	struct v4l2_requestbuffers rb = {.count = NBUF, .type = V4L2_BUF_TYPE_VIDEO_OUTPUT, .memory = V4L2_MEMORY_MMAP};
	if (ioctl(fd, VIDIOC_REQBUFS, &rb) < 0) { LOG("REQBUFS: %s\n", strerror(errno)); return; }
	nbufs = rb.count > NBUF ? NBUF : rb.count;
	for (int i = 0; i < nbufs; i++) {
		struct v4l2_buffer b = {.index = i, .type = rb.type, .memory = V4L2_MEMORY_MMAP};
		ioctl(fd, VIDIOC_QUERYBUF, &b);
		buflen[i] = b.length;
		bufmem[i] = mmap(NULL, b.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, b.m.offset);
		queued[i] = 0;
	}
	frames = 0;
	stream_started = now();
	if (fill_and_queue(0) < 0) return;
	int type = V4L2_BUF_TYPE_VIDEO_OUTPUT;
	if (ioctl(fd, VIDIOC_STREAMON, &type) < 0) { LOG("STREAMON: %s\n", strerror(errno)); return; }
	streaming = 1;
	next_due = stream_started + commit.dwFrameInterval / 1e7;
	LOG("stream started: %s %ux%u interval %u (100 ns units, %.2f fps), %d buffers\n", m->mjpeg ? "MJPG" : "YUYV",
	    m->width, m->height, commit.dwFrameInterval, 1e7 / commit.dwFrameInterval, nbufs);
}

static void send_response(struct uvc_request_data *r) {
	if (ioctl(fd, UVCIOC_SEND_RESPONSE, r) < 0) LOG("SEND_RESPONSE: %s\n", strerror(errno));
}

static void handle_setup(const struct usb_ctrlrequest *c) {
	struct uvc_request_data r;
	memset(&r, 0, sizeof r);
	int interface = c->wIndex & 0xff, entity = c->wIndex >> 8, selector = c->wValue >> 8, request = c->bRequest;
	r.length = c->wLength;
	if (interface == STREAMING_INTERFACE && slow_file && access(slow_file, F_OK) == 0) {
		LOG("slow: probe/commit request 0x%02x answered 0.5 s late\n", request);
		usleep(500000);
	}
	if (request == UVC_SET_CUR) { /* the data comes as UVC_EVENT_DATA */
		setup_selector = selector; setup_interface = interface; setup_entity = entity;
		send_response(&r);
		return;
	}
	if (interface == STREAMING_INTERFACE) {
		struct uvc_streaming_control *s = (void *)r.data;
		if (selector != UVC_VS_PROBE_CONTROL && selector != UVC_VS_COMMIT_CONTROL) { r.length = -EL2HLT; send_response(&r); return; }
		switch (request) {
		case UVC_GET_CUR: *s = selector == UVC_VS_PROBE_CONTROL ? probe : commit; break;
		case UVC_GET_DEF: case UVC_GET_MIN: fill_streaming(s, probe.bFormatIndex, probe.bFrameIndex, 1); break;
		case UVC_GET_MAX: fill_streaming(s, probe.bFormatIndex, probe.bFrameIndex, UINT32_MAX / 2); break;
		case UVC_GET_RES: memset(s, 0, sizeof *s); break;
		case UVC_GET_LEN: r.data[0] = sizeof *s; r.data[1] = 0; r.length = 2; send_response(&r); return;
		case UVC_GET_INFO: r.data[0] = 3; r.length = 1; send_response(&r); return;
		default: r.length = -EL2HLT; send_response(&r); return;
		}
		if (r.length > (int)sizeof *s) r.length = sizeof *s;
		send_response(&r);
		return;
	}
	struct ctl *k = find_ctl(entity, selector);
	if (!k) { r.length = -EL2HLT; send_response(&r); return; } /* a stall: no such control */
	int32_t v;
	switch (request) {
	case UVC_GET_CUR: v = k->cur; break;
	case UVC_GET_MIN: v = k->min; break;
	case UVC_GET_MAX: v = k->max; break;
	case UVC_GET_RES: v = k->res; break;
	case UVC_GET_DEF: v = k->def; break;
	case UVC_GET_LEN: v = k->length; r.length = 2; memcpy(r.data, &v, 2); send_response(&r); return;
	case UVC_GET_INFO: r.data[0] = UVC_CONTROL_CAP_GET | UVC_CONTROL_CAP_SET; r.length = 1; send_response(&r); return;
	default: r.length = -EL2HLT; send_response(&r); return;
	}
	memcpy(r.data, &v, k->length); /* little-endian, as USB */
	r.length = k->length;
	send_response(&r);
}

static void handle_data(const struct uvc_request_data *d) {
	if (setup_interface == STREAMING_INTERFACE) {
		const struct uvc_streaming_control *s = (const void *)d->data;
		if (setup_selector == UVC_VS_PROBE_CONTROL) {
			/* The host has no stop request on a bulk endpoint: a new probe ends the old stream, or
			 * requests still queued on the endpoint would reach the next stream as stale data. */
			stop_stream();
			fill_streaming(&probe, s->bFormatIndex, s->bFrameIndex, s->dwFrameInterval);
			LOG("PROBE format %d frame %d interval %u -> %u\n", s->bFormatIndex, s->bFrameIndex, s->dwFrameInterval, probe.dwFrameInterval);
		} else if (setup_selector == UVC_VS_COMMIT_CONTROL) {
			fill_streaming(&commit, s->bFormatIndex, s->bFrameIndex, s->dwFrameInterval);
			LOG("COMMIT format %d frame %d interval %u\n", commit.bFormatIndex, commit.bFrameIndex, commit.dwFrameInterval);
			start_stream();
		}
		return;
	}
	struct ctl *k = find_ctl(setup_entity, setup_selector);
	if (!k) { LOG("SET_CUR for an unknown control: entity %d selector 0x%02x\n", setup_entity, setup_selector); return; }
	int32_t v = 0;
	memcpy(&v, d->data, k->length);
	if (k->length == 2) v = (int16_t)v;
	if (k->length == 1) v = (uint8_t)v;
	k->cur = v;
	LOG("SET_CUR %s %d\n", k->name, v);
	if (control_log) { fprintf(control_log, "%s %d\n", k->name, v); fflush(control_log); }
}

/* The gadget's own video node: an output device named after the UDC ("dummy_udc"). */
static int find_node(char *path, size_t n) {
	DIR *d = opendir("/sys/class/video4linux");
	struct dirent *e;
	int found = 0;
	while (d && (e = readdir(d))) {
		char p[300], name[64] = "";
		snprintf(p, sizeof p, "/sys/class/video4linux/%s/name", e->d_name);
		if (!read_text(p, name, sizeof name) && !strncmp(name, "dummy_udc", 9)) { snprintf(path, n, "/dev/%s", e->d_name); found = 1; }
	}
	if (d) closedir(d);
	return found;
}

static int read_photo(const char *path) {
	FILE *f = fopen(path, "rb");
	if (!f) { perror(path); return 1; }
	static uint8_t data[16 << 20];
	size_t n = fread(data, 1, sizeof data, f);
	fclose(f);
	tjhandle decoder = tjInitDecompress();
	int w, h, subsampling, colorspace;
	if (tjDecompressHeader3(decoder, data, n, &w, &h, &subsampling, &colorspace) < 0) { fprintf(stderr, "%s: %s\n", path, tjGetErrorStr2(decoder)); return 1; }
	uint8_t *grey = malloc((size_t)w * h);
	if (tjDecompress2(decoder, data, n, grey, w, 0, h, TJPF_GRAY, 0) < 0) { fprintf(stderr, "%s: %s\n", path, tjGetErrorStr2(decoder)); return 1; }
	uint32_t frame; uint64_t t;
	read_stamp(grey, w, &frame, &t);
	/* the mean grey level of the lower half, away from the stamp and mostly off the bar */
	unsigned long long sum = 0, count = 0;
	for (int y = h / 2; y < h; y += 4) for (int x = 0; x < w; x += 4) { sum += grey[(size_t)y * w + x]; count++; }
	printf("frame=%u time=%llu.%06llu size=%dx%d scanhash=%016llx grey=%llu markers=D8", frame, (unsigned long long)(t / 1000000),
	       (unsigned long long)(t % 1000000), w, h, (unsigned long long)scan_hash(data, n), count ? sum / count : 0);
	char comment[256] = "";
	for (size_t i = 2; i + 4 <= n && data[i] == 0xFF;) {
		size_t length = (size_t)data[i + 2] << 8 | data[i + 3];
		printf(",%02X", data[i + 1]);
		if (data[i + 1] == 0xFE && !comment[0])
			for (size_t k = 0; k + 2 < length && k + 1 < sizeof comment && i + 4 + k < n; k++)
				comment[k] = data[i + 4 + k] == ' ' ? '_' : data[i + 4 + k];
		if (data[i + 1] == 0xDA) break;
		i += 2 + length;
	}
	printf(" comment=%s\n", comment);
	return 0;
}

static int write_sample(const char *size, const char *path) {
	struct mode m = {.mjpeg = 1};
	if (sscanf(size, "%ux%u", &m.width, &m.height) != 2 || !m.width || !m.height || m.width % 16 || m.height % 8) {
		fprintf(stderr, "--sample expects WxH (multiples of 16x8)\n");
		return 2;
	}
	size_t cap = (size_t)m.width * m.height * 2 + 256;
	uint8_t *out = malloc(cap);
	planes[0] = malloc((size_t)m.width * m.height); planes[1] = malloc((size_t)m.width * m.height / 2); planes[2] = malloc((size_t)m.width * m.height / 2);
	setenv("TJ_RESTART", "1", 1);
	encoder = tjInitCompress();
	frames = 7;
	size_t used = encode_mjpeg(&m, out, cap, "shutter-uvc-feeder sample", now_us());
	FILE *f = fopen(path, "wb");
	if (!used || !f || fwrite(out, 1, used, f) != used || fclose(f)) { perror(path); return 1; }
	printf("scanhash=%016llx bytes=%zu\n", (unsigned long long)scan_hash(out, used), used);
	return 0;
}

int main(int argc, char **argv) {
	const char *function = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--read") && i + 1 < argc) return read_photo(argv[i + 1]);
		else if (!strcmp(argv[i], "--sample") && i + 2 < argc) return write_sample(argv[i + 1], argv[i + 2]);
		else if (!strcmp(argv[i], "--gadget") && i + 1 < argc) function = argv[++i];
		else if (!strcmp(argv[i], "--controls") && i + 1 < argc) control_log = fopen(argv[++i], "a");
		else if (!strcmp(argv[i], "--frames") && i + 1 < argc) frame_log = fopen(argv[++i], "a");
		else if (!strcmp(argv[i], "--slow") && i + 1 < argc) slow_file = argv[++i];
		else { fprintf(stderr, "usage: %s --gadget CONFIGFS_FUNCTION_DIR [--controls LOG] [--frames LOG] [--slow FILE] | --read PHOTO.jpg\n", argv[0]); return 2; }
	}
	if (!function) { fprintf(stderr, "uvc-feeder: --gadget is required\n"); return 2; }
	if (!load_modes(function)) { fprintf(stderr, "uvc-feeder: no formats under %s/streaming\n", function); return 1; }
	unsigned maxw = 0, maxh = 0;
	for (int i = 0; i < nmodes; i++) {
		LOG("mode: format %d frame %d %s %ux%u, %d intervals, default %u\n", modes[i].format, modes[i].frame,
		    modes[i].mjpeg ? "MJPG" : "YUYV", modes[i].width, modes[i].height, modes[i].nivals, modes[i].defival);
		if (modes[i].width * modes[i].height > maxw * maxh) { maxw = modes[i].width; maxh = modes[i].height; }
	}
	planes[0] = malloc((size_t)maxw * maxh); planes[1] = malloc((size_t)maxw * maxh / 2); planes[2] = malloc((size_t)maxw * maxh / 2);
	setenv("TJ_RESTART", "1", 1); /* a restart marker after every MCU row: see encode_mjpeg */
	encoder = tjInitCompress();
	signal(SIGPIPE, SIG_IGN);
	fill_streaming(&probe, modes[0].format, modes[0].frame, 0);
	commit = probe;
	for (;;) {
		char path[300];
		while (!find_node(path, sizeof path)) usleep(50000);
		fd = open(path, O_RDWR | O_NONBLOCK);
		if (fd < 0) { usleep(50000); continue; }
		LOG("opened %s\n", path);
		/* Without SETUP (and DATA) subscribed, the host's requests go unanswered and it never enumerates. */
		static const int events[] = {UVC_EVENT_CONNECT, UVC_EVENT_DISCONNECT, UVC_EVENT_STREAMON,
		                             UVC_EVENT_STREAMOFF, UVC_EVENT_SETUP, UVC_EVENT_DATA};
		for (unsigned i = 0; i < sizeof events / sizeof events[0]; i++) {
			struct v4l2_event_subscription s = {.type = events[i]};
			if (ioctl(fd, VIDIOC_SUBSCRIBE_EVENT, &s) < 0) LOG("subscribe 0x%x: %s\n", events[i], strerror(errno));
		}
		for (int alive = 1; alive;) {
			struct pollfd p = {.fd = fd, .events = POLLPRI | (streaming ? POLLOUT : 0)};
			int timeout = 100;
			if (streaming) { timeout = (int)((next_due - now()) * 1000); if (timeout < 0) timeout = 0; }
			poll(&p, 1, timeout);
			if (p.revents & (POLLERR | POLLHUP)) { LOG("poll error/hangup\n"); break; }
			if (p.revents & POLLPRI) {
				struct v4l2_event e;
				while (ioctl(fd, VIDIOC_DQEVENT, &e) == 0) {
					struct uvc_event *u = (void *)&e.u.data;
					switch (e.type) {
					case UVC_EVENT_CONNECT: LOG("CONNECT speed %d\n", u->speed); break;
					case UVC_EVENT_DISCONNECT: LOG("DISCONNECT\n"); alive = 0; break;
					case UVC_EVENT_STREAMON: LOG("STREAMON\n"); break;
					case UVC_EVENT_STREAMOFF: LOG("STREAMOFF\n"); stop_stream(); break;
					case UVC_EVENT_SETUP: handle_setup(&u->req); break;
					case UVC_EVENT_DATA: handle_data(&u->data); break;
					}
				}
			}
			if (!streaming) continue;
			struct v4l2_buffer b = {.type = V4L2_BUF_TYPE_VIDEO_OUTPUT, .memory = V4L2_MEMORY_MMAP};
			while (ioctl(fd, VIDIOC_DQBUF, &b) == 0) queued[b.index] = 0;
			if (now() >= next_due) { /* one frame per committed interval; a full queue drops it */
				for (int i = 0; i < nbufs; i++)
					if (!queued[i]) { fill_and_queue(i); break; }
				next_due += commit.dwFrameInterval / 1e7;
				if (next_due < now()) next_due = now();
			}
		}
		stop_stream();
		close(fd);
		fd = -1;
		LOG("closed; waiting for the gadget node\n");
		usleep(200000);
	}
}
