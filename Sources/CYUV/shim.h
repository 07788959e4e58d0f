// libyuv (Debian libyuv-dev): SIMD format conversions and scaling. Used where TurboJPEG cannot
// take a camera's layout as it is (NV12's interleaved chroma), to bring a frame to planar 4:2:0
// for an effect, and to scale digital zoom's crop back to the frame's size. Debian 12 ships no
// pkg-config file for it, so the module map links "yuv" itself.
#include <libyuv/planar_functions.h>
#include <libyuv/convert.h>
#include <libyuv/scale.h>
// ARGBScale: the live view scales YUYV and UYVY as 4-byte macro-pixels (two pixels each), no
// conversion first (see ShutterCapture's PreviewScaler).
#include <libyuv/scale_argb.h>
