#include "shutter_gpiod.h"
