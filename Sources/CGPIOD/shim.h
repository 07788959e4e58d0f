#ifndef CGPIOD_SHIM_H
#define CGPIOD_SHIM_H
// libgpiod's public header. Swift does not call it directly: CGPIODBackend wraps both
// the 1.6 and the 2.x API behind one interface.
#include <gpiod.h>
#endif
