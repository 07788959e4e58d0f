#ifndef SHUTTER_CQRENCODE_SHIM_H
#define SHUTTER_CQRENCODE_SHIM_H

// libqrencode (Debian libqrencode-dev, 4.1 on Debian 12 and 13): the QR code the daemon prints
// on a terminal so a phone can open the live view's link with its token.
#include <qrencode.h>

/// Whether module `index` (row * width + column) of `code` is dark: bit 0 of its byte, as
/// qrencode.h documents the symbol data (the other bits say which part of the symbol it is).
static inline int shutter_qr_module_is_dark(const QRcode *code, int index) {
    return code->data[index] & 1;
}

#endif
