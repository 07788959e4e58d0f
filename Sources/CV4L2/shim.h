#ifndef CV4L2_SHIM_H
#define CV4L2_SHIM_H
// The kernel's V4L2 header, the C library's open/ioctl/mmap, and libv4lconvert.
//
// The device is opened, controlled and mapped through the C library, never through libv4l2:
// libv4l2 calls open/ioctl/mmap through syscall() directly, so LD_PRELOAD layers such as
// libcamerify's v4l2-compat.so would never see them and shutter would talk to the raw node.
// libv4lconvert is used only to convert a format the encoder cannot take (a Bayer or vendor
// format a webcam offers), and its own ioctls go through the C library too (CV4L2_dev_ops).
//
// Swift cannot call variadic C functions (open, ioctl) nor import function-like macros
// (VIDIOC_*, V4L2_PIX_FMT_*, MAP_FAILED), so this shim wraps and copies them under CV4L2_ names.
#include <stddef.h>
#include <stdint.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/videodev2.h>
#include <libv4lconvert.h>
#include <libv4l-plugin.h>

// The mode argument is passed even though O_CREAT is never set: with _FORTIFY_SOURCE a two-argument
// open() becomes __open_2, which older LD_PRELOAD layers (libcamera 0.0.3) do not intercept.
static inline int CV4L2_open(const char *path, int flags) { return open(path, flags, 0); }
static inline int CV4L2_close(int fd) { return close(fd); }
static inline int CV4L2_ioctl(int fd, unsigned long request, void *argument) { return ioctl(fd, request, argument); }
static inline void *CV4L2_mmap(int fd, size_t length, int64_t offset) {
    return mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)offset);
}
static inline int CV4L2_munmap(void *start, size_t length) { return munmap(start, length); }
static inline int CV4L2_is_map_failed(const void *pointer) { return pointer == MAP_FAILED; }

// libv4lconvert's device calls, routed through the C library (its default ones use syscall()).
static inline void *CV4L2_dev_init(int fd) { (void)fd; return NULL; }
static inline void CV4L2_dev_close(void *priv) { (void)priv; }
static inline int CV4L2_dev_ioctl(void *priv, int fd, unsigned long request, void *argument) {
    (void)priv;
    return ioctl(fd, request, argument);
}
static inline ssize_t CV4L2_dev_read(void *priv, int fd, void *buffer, size_t count) { (void)priv; return read(fd, buffer, count); }
static inline ssize_t CV4L2_dev_write(void *priv, int fd, const void *buffer, size_t count) { (void)priv; return write(fd, buffer, count); }

/// A libv4lconvert converter for the device `fd` whose device calls go through the C library;
/// NULL when it cannot be made (out of memory). Free it with `v4lconvert_destroy` before closing `fd`.
static inline struct v4lconvert_data *CV4L2_converter_create(int fd) {
    static const struct libv4l_dev_ops operations = {
        .init = CV4L2_dev_init, .close = CV4L2_dev_close, .ioctl = CV4L2_dev_ioctl,
        .read = CV4L2_dev_read, .write = CV4L2_dev_write,
    };
    return v4lconvert_create_with_dev_ops(fd, NULL, &operations);
}

static const unsigned long CV4L2_VIDIOC_QUERYCAP = VIDIOC_QUERYCAP;
static const unsigned long CV4L2_VIDIOC_ENUM_FMT = VIDIOC_ENUM_FMT;
static const unsigned long CV4L2_VIDIOC_ENUM_FRAMESIZES = VIDIOC_ENUM_FRAMESIZES;
static const unsigned long CV4L2_VIDIOC_ENUM_FRAMEINTERVALS = VIDIOC_ENUM_FRAMEINTERVALS;
static const unsigned long CV4L2_VIDIOC_G_FMT = VIDIOC_G_FMT;
static const unsigned long CV4L2_VIDIOC_S_FMT = VIDIOC_S_FMT;
static const unsigned long CV4L2_VIDIOC_G_PARM = VIDIOC_G_PARM;
static const unsigned long CV4L2_VIDIOC_S_PARM = VIDIOC_S_PARM;
static const unsigned long CV4L2_VIDIOC_REQBUFS = VIDIOC_REQBUFS;
static const unsigned long CV4L2_VIDIOC_QUERYBUF = VIDIOC_QUERYBUF;
static const unsigned long CV4L2_VIDIOC_QBUF = VIDIOC_QBUF;
static const unsigned long CV4L2_VIDIOC_DQBUF = VIDIOC_DQBUF;
static const unsigned long CV4L2_VIDIOC_STREAMON = VIDIOC_STREAMON;
static const unsigned long CV4L2_VIDIOC_STREAMOFF = VIDIOC_STREAMOFF;
static const unsigned long CV4L2_VIDIOC_QUERYCTRL = VIDIOC_QUERYCTRL;
static const unsigned long CV4L2_VIDIOC_QUERYMENU = VIDIOC_QUERYMENU;
static const unsigned long CV4L2_VIDIOC_G_CTRL = VIDIOC_G_CTRL;
static const unsigned long CV4L2_VIDIOC_S_CTRL = VIDIOC_S_CTRL;
static const unsigned long CV4L2_VIDIOC_G_INPUT = VIDIOC_G_INPUT;

static const uint32_t CV4L2_PIX_FMT_MJPEG = V4L2_PIX_FMT_MJPEG;
static const uint32_t CV4L2_PIX_FMT_JPEG = V4L2_PIX_FMT_JPEG;
static const uint32_t CV4L2_PIX_FMT_YUYV = V4L2_PIX_FMT_YUYV;
static const uint32_t CV4L2_PIX_FMT_UYVY = V4L2_PIX_FMT_UYVY;
static const uint32_t CV4L2_PIX_FMT_NV12 = V4L2_PIX_FMT_NV12;
static const uint32_t CV4L2_PIX_FMT_YUV420 = V4L2_PIX_FMT_YUV420;
static const uint32_t CV4L2_PIX_FMT_RGB24 = V4L2_PIX_FMT_RGB24;
static const uint32_t CV4L2_PIX_FMT_BGR24 = V4L2_PIX_FMT_BGR24;
static const uint32_t CV4L2_PIX_FMT_GREY = V4L2_PIX_FMT_GREY;

// How a format's values span a byte (struct v4l2_pix_format's extended fields, valid only
// when `priv` is the magic number).
static const uint32_t CV4L2_PIX_FMT_PRIV_MAGIC = V4L2_PIX_FMT_PRIV_MAGIC;
static const uint32_t CV4L2_QUANTIZATION_DEFAULT = V4L2_QUANTIZATION_DEFAULT;
static const uint32_t CV4L2_QUANTIZATION_FULL_RANGE = V4L2_QUANTIZATION_FULL_RANGE;
static const uint32_t CV4L2_QUANTIZATION_LIM_RANGE = V4L2_QUANTIZATION_LIM_RANGE;
static const uint32_t CV4L2_COLORSPACE_DEFAULT = V4L2_COLORSPACE_DEFAULT;
static const uint32_t CV4L2_COLORSPACE_SMPTE170M = V4L2_COLORSPACE_SMPTE170M;
static const uint32_t CV4L2_COLORSPACE_REC709 = V4L2_COLORSPACE_REC709;
static const uint32_t CV4L2_COLORSPACE_SRGB = V4L2_COLORSPACE_SRGB;
static const uint32_t CV4L2_COLORSPACE_JPEG = V4L2_COLORSPACE_JPEG;
static const uint32_t CV4L2_YCBCR_ENC_DEFAULT = V4L2_YCBCR_ENC_DEFAULT;
static const uint32_t CV4L2_YCBCR_ENC_601 = V4L2_YCBCR_ENC_601;

/// What V4L2_QUANTIZATION_DEFAULT means for a format: the kernel's own macro, so the rule
/// (full range for RGB and for the JPEG colorspace, limited for other Y'CbCr) is the kernel's.
static inline uint32_t CV4L2_map_quantization_default(int is_rgb_or_hsv, uint32_t colorspace, uint32_t ycbcr_enc) {
    (void)ycbcr_enc;  // the macro no longer reads it
    return V4L2_MAP_QUANTIZATION_DEFAULT(is_rgb_or_hsv, colorspace, ycbcr_enc);
}

static const uint32_t CV4L2_CAP_VIDEO_CAPTURE = V4L2_CAP_VIDEO_CAPTURE;
static const uint32_t CV4L2_CAP_STREAMING = V4L2_CAP_STREAMING;
static const uint32_t CV4L2_CAP_VIDEO_OUTPUT = V4L2_CAP_VIDEO_OUTPUT;
static const uint32_t CV4L2_CAP_DEVICE_CAPS = V4L2_CAP_DEVICE_CAPS;
static const uint32_t CV4L2_BUF_TYPE_VIDEO_CAPTURE = V4L2_BUF_TYPE_VIDEO_CAPTURE;
static const uint32_t CV4L2_MEMORY_MMAP = V4L2_MEMORY_MMAP;
static const uint32_t CV4L2_FIELD_NONE = V4L2_FIELD_NONE;
static const uint32_t CV4L2_FIELD_ANY = V4L2_FIELD_ANY;
static const uint32_t CV4L2_BUF_FLAG_ERROR = V4L2_BUF_FLAG_ERROR;
static const uint32_t CV4L2_BUF_FLAG_TIMESTAMP_MASK = V4L2_BUF_FLAG_TIMESTAMP_MASK;
static const uint32_t CV4L2_BUF_FLAG_TIMESTAMP_MONOTONIC = V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC;
static const uint32_t CV4L2_BUF_FLAG_TSTAMP_SRC_MASK = V4L2_BUF_FLAG_TSTAMP_SRC_MASK;
static const uint32_t CV4L2_BUF_FLAG_TSTAMP_SRC_SOE = V4L2_BUF_FLAG_TSTAMP_SRC_SOE;
static const uint32_t CV4L2_CAP_TIMEPERFRAME = V4L2_CAP_TIMEPERFRAME;
static const uint32_t CV4L2_FRMIVAL_TYPE_CONTINUOUS = V4L2_FRMIVAL_TYPE_CONTINUOUS;
static const uint32_t CV4L2_FMT_FLAG_EMULATED = V4L2_FMT_FLAG_EMULATED;
static const uint32_t CV4L2_FRMSIZE_TYPE_DISCRETE = V4L2_FRMSIZE_TYPE_DISCRETE;
static const uint32_t CV4L2_FRMIVAL_TYPE_DISCRETE = V4L2_FRMIVAL_TYPE_DISCRETE;

static const uint32_t CV4L2_CTRL_FLAG_NEXT_CTRL = V4L2_CTRL_FLAG_NEXT_CTRL;
static const uint32_t CV4L2_CTRL_FLAG_DISABLED = V4L2_CTRL_FLAG_DISABLED;
static const uint32_t CV4L2_CTRL_FLAG_READ_ONLY = V4L2_CTRL_FLAG_READ_ONLY;
static const uint32_t CV4L2_CTRL_FLAG_INACTIVE = V4L2_CTRL_FLAG_INACTIVE;
static const uint32_t CV4L2_CTRL_TYPE_INTEGER = V4L2_CTRL_TYPE_INTEGER;
static const uint32_t CV4L2_CTRL_TYPE_BOOLEAN = V4L2_CTRL_TYPE_BOOLEAN;
static const uint32_t CV4L2_CTRL_TYPE_MENU = V4L2_CTRL_TYPE_MENU;
static const uint32_t CV4L2_CTRL_TYPE_INTEGER_MENU = V4L2_CTRL_TYPE_INTEGER_MENU;
static const uint32_t CV4L2_CTRL_TYPE_BUTTON = V4L2_CTRL_TYPE_BUTTON;
static const uint32_t CV4L2_CTRL_TYPE_CTRL_CLASS = V4L2_CTRL_TYPE_CTRL_CLASS;

static const uint32_t CV4L2_CID_ZOOM_ABSOLUTE = V4L2_CID_ZOOM_ABSOLUTE;
static const uint32_t CV4L2_CID_AUTO_EXPOSURE_BIAS = V4L2_CID_AUTO_EXPOSURE_BIAS;
static const uint32_t CV4L2_CID_EXPOSURE_ABSOLUTE = V4L2_CID_EXPOSURE_ABSOLUTE;
static const uint32_t CV4L2_CID_EXPOSURE_AUTO = V4L2_CID_EXPOSURE_AUTO;
static const uint32_t CV4L2_CID_FOCUS_ABSOLUTE = V4L2_CID_FOCUS_ABSOLUTE;
static const uint32_t CV4L2_CID_FOCUS_AUTO = V4L2_CID_FOCUS_AUTO;
static const int32_t CV4L2_EXPOSURE_MANUAL = V4L2_EXPOSURE_MANUAL;
#endif
