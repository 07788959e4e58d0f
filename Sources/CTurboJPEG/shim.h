#ifndef CTURBOJPEG_SHIM_H
#define CTURBOJPEG_SHIM_H
// libjpeg-turbo's TurboJPEG API (2.x). Its flags are plain integer macros Swift imports.
#include <stddef.h>
#include <turbojpeg.h>
#endif
