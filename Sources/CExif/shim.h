#ifndef CEXIF_SHIM_H
#define CEXIF_SHIM_H
// libexif: building the EXIF block written into each photo.
#include <stdlib.h>
#include <libexif/exif-data.h>
#include <libexif/exif-entry.h>
#include <libexif/exif-content.h>
#include <libexif/exif-utils.h>
#include <libexif/exif-tag.h>
#include <libexif/exif-format.h>
#endif
