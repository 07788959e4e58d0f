// libyuv (Debian libyuv-dev): SIMD format conversions, used only where TurboJPEG cannot take
// a camera's layout as it is (NV12's interleaved chroma). Debian 12 ships no pkg-config file
// for it, so the module map links "yuv" itself.
#include <libyuv/planar_functions.h>
