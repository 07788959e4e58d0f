#ifndef SHUTTER_GPIOD_H
#define SHUTTER_GPIOD_H
#endif
