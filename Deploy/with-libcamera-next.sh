#!/usr/bin/env bash
# with-libcamera-next.sh - build shutter against the newer libcamera API (Debian trixie's,
# as Raspberry Pi OS trixie ships) in place of Debian 12's 0.0.3, without touching the system.
#
#   Deploy/with-libcamera-next.sh swift build       compile and link against the newer libcamera
#   Deploy/with-libcamera-next.sh --print-env       show the variables it sets
#   Deploy/with-libcamera-next.sh --help
#
# Debian 12 cannot install trixie's libcamera next to 0.0.3, so this downloads trixie's
# libcamera-dev and its runtime library .debs with a private apt configuration (the system's
# apt state is not changed), unpacks them into $LIBCAMERA_NEXT_ROOT (default
# ~/.cache/shutter/libcamera-next) and runs the command with:
#   PKG_CONFIG_SYSROOT_DIR / PKG_CONFIG_PATH   so pkg-config finds the newer headers and .so
#   SWIFT_SCRATCH=.build-libcamera-next        a separate build folder (the C++ module of the
#                                              backend is cached per header set)
# `swift build` gets --scratch-path and an rpath added. The binaries link against trixie's
# libcamera.so.0.4 (every symbol shutter uses is resolved at link time) but cannot run on
# Debian 12: that libcamera needs GLIBC_2.38 and GLIBCXX_3.4.32 (trixie's glibc and gcc 14's
# libstdc++), Debian 12 has glibc 2.36 and gcc 12. The loader says so and stops:
#   libcamera.so.0.4: version `GLIBC_2.38' not found (required by .../libcamera.so.0.4)
# So this is a compile-and-link check of the newer API; `swift test` is refused here.
set -euo pipefail
. "$(dirname "$(readlink -f "$0")")/private-apt.sh"

ROOT=${LIBCAMERA_NEXT_ROOT:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/shutter/libcamera-next}
SUITE=${LIBCAMERA_NEXT_SUITE:-trixie}
case "${1:-}" in
  -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
  "") echo "with-libcamera-next: no command given (try --help)" >&2; exit 2 ;;
esac

LIBDIR=$ROOT/usr/lib/x86_64-linux-gnu
[ "$(dpkg --print-architecture)" = arm64 ] && LIBDIR=$ROOT/usr/lib/aarch64-linux-gnu

if [ ! -f "$LIBDIR/pkgconfig/libcamera.pc" ]; then
  echo "with-libcamera-next: fetching libcamera from Debian $SUITE into $ROOT" >&2
  private_apt_begin "$ROOT" "$SUITE"
  # The runtime package's name carries the soname (libcamera0.5): take it from libcamera-dev's Depends.
  runtime=$(apt-cache depends libcamera-dev | awk '/Depends: libcamera[0-9]/ { print $2; exit }')
  [ -n "$runtime" ] || { echo "with-libcamera-next: libcamera-dev in $SUITE names no runtime library" >&2; exit 1; }
  private_apt_unpack "$ROOT" libcamera-dev "$runtime"
  [ -f "$LIBDIR/pkgconfig/libcamera.pc" ] || { echo "with-libcamera-next: no libcamera.pc in the unpacked packages" >&2; exit 1; }
fi

export PKG_CONFIG_SYSROOT_DIR=$ROOT
export PKG_CONFIG_PATH=$LIBDIR/pkgconfig
export SWIFT_SCRATCH=${SWIFT_SCRATCH:-.build-libcamera-next}

if [ "$1" = --print-env ]; then
  printf 'PKG_CONFIG_SYSROOT_DIR=%s\nPKG_CONFIG_PATH=%s\nSWIFT_SCRATCH=%s\nlibcamera %s\n' \
    "$PKG_CONFIG_SYSROOT_DIR" "$PKG_CONFIG_PATH" "$SWIFT_SCRATCH" "$(pkg-config --modversion libcamera)"
  exit 0
fi

if [ "$1" = swift ] && [ "${2:-}" = test ]; then
  echo "with-libcamera-next: 'swift test' cannot run here: $SUITE's libcamera.so needs a newer glibc/libstdc++ than Debian 12's; use 'swift build'" >&2
  exit 2
fi
if [ "$1" = swift ] && [ "${2:-}" = build ]; then
  shift 2
  exec swift build --scratch-path "$SWIFT_SCRATCH" -Xlinker -rpath -Xlinker "$LIBDIR" "$@"
fi
exec "$@"
