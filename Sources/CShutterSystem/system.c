// Header-only: see include/shutter_system.h.
