#!/usr/bin/env bash
# with-libgpiod2.sh - run a command with libgpiod 2.x (Raspberry Pi OS trixie's API)
# in place of the system's 1.6, without touching the system.
#
#   Deploy/with-libgpiod2.sh swift build            build against libgpiod 2.x
#   Deploy/with-libgpiod2.sh swift test             unit tests against 2.x
#   Deploy/with-libgpiod2.sh --print-env            show the variables it sets
#   Deploy/with-libgpiod2.sh --help
#
# Debian 12 cannot install libgpiod 2.x next to 1.6, so this downloads Debian 13's
# libgpiod-dev and libgpiod3 .debs with a private apt configuration (the system's
# apt state is not changed), unpacks them into $LIBGPIOD2_ROOT (default
# ~/.cache/shutter/libgpiod2), and runs the command with:
#   PKG_CONFIG_SYSROOT_DIR / PKG_CONFIG_PATH   so pkg-config finds 2.x's gpiod.h and .so
#   LD_LIBRARY_PATH                            so the binaries load libgpiod.so.3
#   SWIFT_SCRATCH=.build-gpiod2                a separate build folder: the compiled C
#                                              module is cached per module map, and would
#                                              otherwise mix the two headers
# `swift build|test|run` get --scratch-path and an rpath added automatically.
set -euo pipefail
. "$(dirname "$(readlink -f "$0")")/private-apt.sh"

ROOT=${LIBGPIOD2_ROOT:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/shutter/libgpiod2}
SUITE=${LIBGPIOD2_SUITE:-trixie}     # trixie: 2.2.x; bookworm-backports: 2.1.x
case "${1:-}" in
  -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
  "") echo "with-libgpiod2: no command given (try --help)" >&2; exit 2 ;;
esac

LIBDIR=$ROOT/usr/lib/x86_64-linux-gnu
[ "$(dpkg --print-architecture)" = arm64 ] && LIBDIR=$ROOT/usr/lib/aarch64-linux-gnu

if [ ! -f "$LIBDIR/pkgconfig/libgpiod.pc" ]; then
  echo "with-libgpiod2: fetching libgpiod 2.x from Debian $SUITE into $ROOT" >&2
  private_apt_begin "$ROOT" "$SUITE"
  private_apt_unpack "$ROOT" libgpiod-dev libgpiod3
  [ -f "$LIBDIR/pkgconfig/libgpiod.pc" ] || { echo "with-libgpiod2: no libgpiod.pc in the unpacked packages" >&2; exit 1; }
fi

# The sysroot prefixes every package's paths, not only libgpiod's: libcamera's headers live in
# /usr/include/libcamera (not a default include directory), so make them visible in $ROOT too.
# (A libgpiod.pc with a moved prefix instead would put the system's -L/usr/lib/... ahead of
# 2.x's library, and the 1.6 libgpiod.so would be linked.)
if [ -d /usr/include/libcamera ] && [ ! -e "$ROOT/usr/include/libcamera" ]; then
  mkdir -p "$ROOT/usr/include" && ln -s /usr/include/libcamera "$ROOT/usr/include/libcamera"
fi
export PKG_CONFIG_SYSROOT_DIR=$ROOT
export PKG_CONFIG_PATH=$LIBDIR/pkgconfig
export LD_LIBRARY_PATH=$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export SWIFT_SCRATCH=${SWIFT_SCRATCH:-.build-gpiod2}
export LIBGPIOD2_LIBDIR=$LIBDIR

if [ "$1" = --print-env ]; then
  printf 'PKG_CONFIG_SYSROOT_DIR=%s\nPKG_CONFIG_PATH=%s\nLD_LIBRARY_PATH=%s\nSWIFT_SCRATCH=%s\n' \
    "$PKG_CONFIG_SYSROOT_DIR" "$PKG_CONFIG_PATH" "$LD_LIBRARY_PATH" "$SWIFT_SCRATCH"
  exit 0
fi

if [ "$1" = swift ] && [ $# -ge 2 ] && [[ "$2" =~ ^(build|test|run)$ ]]; then
  sub=$2; shift 2
  exec swift "$sub" --scratch-path "$SWIFT_SCRATCH" -Xlinker -rpath -Xlinker "$LIBDIR" "$@"
fi
exec "$@"
