#!/usr/bin/env bash
# debian-root.sh - a Debian root of a newer release than this machine's, with what a Pi user
# builds shutter with there, made once and reused, and a way to run a command in it with this
# source tree at the same path.
#
#   Deploy/debian-root.sh SUITE swift build     run COMMAND in SUITE's root, in the current directory
#   Deploy/debian-root.sh SUITE --make          make (or bring up to date) the root only
#   Deploy/debian-root.sh SUITE --print-root    print the root's path
#   Deploy/debian-root.sh --help
#
# SUITE is one of:
#   trixie  Debian 13, what Raspberry Pi OS trixie builds with: swiftlang 6.0.3 (shutter's
#           oldest Swift), libgpiod 2.2, Debian's libcamera 0.4
#   sid     Debian unstable: swiftlang 6.2, libcamera 0.7 (the newest libcamera API, as
#           Raspberry Pi OS's own libcamera 0.6 and 0.7 have it: string controls as
#           std::string_view, FrameMetadata::FrameStartup)
#
# The root is made with `debootstrap SUITE` from the Debian mirror the machine's apt sources
# already use (the first one in /etc/apt/sources.list* that serves this system's suite; or
# $DEBIAN_MIRROR), into $SHUTTER_DEBIAN_ROOTS/SUITE (default
# ${XDG_CACHE_HOME:-$HOME/.cache}/shutter/debian-roots/SUITE). It is made again only when the
# package list below changes (a stamp file in the root keeps the list it was made with), so a
# machine that runs CI again reuses it. Making one takes 2 to 5 minutes and about 3 GB; runs
# share it, a remake waits for them (a lock).
#
# COMMAND runs as root in the root under chroot, in a mount namespace of its own (nothing is
# left mounted on the host, even when killed), with the source tree bind-mounted at the same
# path (it may be inside a 0700 home directory), /proc, /sys, /dev, and a fresh /tmp. The
# mounts are undone on exit. `swift build`, `swift test` and `swift run` get --scratch-path
# .build-SUITE (or $SWIFT_SCRATCH): each root's toolchain and libraries keep their own build
# folder.
#
# Needs root (or sudo), debootstrap and debian-archive-keyring (Deploy/setup.sh installs them).
set -euo pipefail

tree=$(dirname "$(dirname "$(readlink -f "$0")")")
case "${1:-}" in
  -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
  "") echo "debian-root: no suite given (trixie or sid; try --help)" >&2; exit 2 ;;
  trixie|sid) suite=$1; shift ;;
  --inside) suite=${2:?}; shift 2; set -- --inside "$@" ;;
  *) echo "debian-root: unknown suite '$1' (trixie or sid; try --help)" >&2; exit 2 ;;
esac
root=${SHUTTER_DEBIAN_ROOTS:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/shutter/debian-roots}/$suite
# The build (README's "Supported systems", trixie) and the unit tests (the hook tests' /bin/sh
# and sleep come with the base system); then what Tests/VM's gpio and libcamera suites run
# when a qemu guest boots this root (Deploy/vm/run-in-vm.sh --root): gpiod's tools, python3,
# socat, file, pgrep, modprobe, udevd, and libcamera's IPA modules, cam and libcamerify.
# Both suites have the same package names.
packages=(swiftlang g++ pkg-config libgpiod-dev libcamera-dev libv4l-dev libturbojpeg0-dev
          libexif-dev libyuv-dev libmicrohttpd-dev libqrencode-dev libmosquitto-dev
          gpiod python3 socat file procps kmod udev libcamera-ipa libcamera-tools libcamera-v4l2)

case "${1:-}" in
  --print-root) echo "$root"; exit 0 ;;
  "") echo "debian-root: no command given (try --help)" >&2; exit 2 ;;
  --inside) ;;
  --make) ;;
  -*) echo "debian-root: unknown option '$1' (try --help)" >&2; exit 2 ;;
esac
if [ "$(id -u)" != 0 ]; then
  exec sudo --preserve-env=SHUTTER_DEBIAN_ROOTS,DEBIAN_MIRROR,SWIFT_SCRATCH,XDG_CACHE_HOME "$0" "$suite" "$@"
fi

# The mirror: the one this machine's apt already fetches its own suite from.
mirror() {
  if [ -n "${DEBIAN_MIRROR:-}" ]; then echo "$DEBIAN_MIRROR"; return; fi
  local codename
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  # One-line ("deb URL SUITE ...") and deb822 ("URIs:" with "Suites:") sources.
  cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
    awk -v s="$codename" '$1 == "deb" { i = 2; if ($2 ~ /^\[/) while ($i !~ /\]$/) i++; if ($2 ~ /^\[/) i++; if ($(i + 1) == s) { print $i; exit } }'
  cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
    awk -v s="$codename" 'BEGIN { RS = ""; FS = "\n" } {
      uri = ""; ok = 0
      for (j = 1; j <= NF; j++) {
        if ($j ~ /^URIs:/) { split($j, u, /[ \t]+/); uri = u[2] }
        if ($j ~ /^Suites:/) { n = split($j, w, /[ \t]+/); for (k = 2; k <= n; k++) if (w[k] == s) ok = 1 }
      }
      if (ok && uri != "") { print uri; exit }
    }'
}

stamp_text() { printf '%s\n' "$suite" "${packages[@]}"; }

# Mounts under DIR that are still there (another run's namespace never shows here; a
# leftover from an older script would): never delete through them.
mounted_under() { awk -v d="$1" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo; }

make_root() {
  local m new=$root.new
  m=$(mirror | head -n 1)
  [ -n "$m" ] || { echo "debian-root: no Debian mirror found in /etc/apt/sources.list* (set DEBIAN_MIRROR)" >&2; exit 1; }
  echo "debian-root: making the Debian $suite root in $root from $m (once; a few minutes)" >&2
  [ -z "$(mounted_under "$new")" ] || { echo "debian-root: something is mounted under $new; unmount it first" >&2; exit 1; }
  rm -rf --one-file-system "$new"
  debootstrap --variant=minbase --components=main "$suite" "$new" "$m" > "$root.log" 2>&1 ||
    { echo "debian-root: debootstrap failed (last lines of $root.log):" >&2; tail -n 20 "$root.log" >&2; exit 1; }
  echo "deb $m $suite main" > "$new/etc/apt/sources.list"
  # sid's Release file is valid for a week only, and the archive a machine reaches may be a
  # dated copy of Debian's: apt would refuse it as expired. The packages are still checked
  # against the archive's signature.
  echo 'Acquire::Check-Valid-Until "false";' > "$new/etc/apt/apt.conf.d/99shutter-check-valid-until"
  # No daemon starts from a package's maintainer script.
  printf '#!/bin/sh\nexit 101\n' > "$new/usr/sbin/policy-rc.d"; chmod +x "$new/usr/sbin/policy-rc.d"
  in_namespace "$new" / /usr/bin/env DEBIAN_FRONTEND=noninteractive \
    sh -c 'apt-get update -qq && apt-get install -y -qq --no-install-recommends "$@" && apt-get clean' _ "${packages[@]}" >> "$root.log" 2>&1 ||
    { echo "debian-root: installing packages failed (last lines of $root.log):" >&2; tail -n 20 "$root.log" >&2; exit 1; }
  stamp_text > "$new/.shutter-packages"
  if [ -e "$root" ]; then
    [ -z "$(mounted_under "$root")" ] || { echo "debian-root: something is mounted under $root; unmount it first" >&2; exit 1; }
    rm -rf --one-file-system "$root"
  fi
  mv "$new" "$root"
  echo "debian-root: root ready ($(du -sh --one-file-system "$root" | cut -f1))" >&2
}

# in_namespace ROOT CWD COMMAND...: chroot into ROOT in a private mount namespace.
in_namespace() {
  unshare --mount --propagation private "$0" --inside "$suite" "$@"
}

if [ "$1" = --inside ]; then
  shift; r=$1 cwd=$2; shift 2
  mounts=()
  cleanup() {   # the namespace goes with us anyway; undo in reverse order all the same
    local i
    for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[i]}" 2>/dev/null || true; done
  }
  trap cleanup EXIT
  bind() { mkdir -p "$r$2"; mount "${@:3}" "$1" "$r$2"; mounts+=("$r$2"); }
  bind proc /proc -t proc
  bind sysfs /sys -t sysfs
  bind /dev /dev --rbind
  bind tmpfs /tmp -t tmpfs
  [ "$r" = "$root.new" ] || bind "$tree" "$tree" --bind
  [ -f /etc/resolv.conf ] && [ "$r" = "$root.new" ] && cp -L /etc/resolv.conf "$r/etc/resolv.conf"
  status=0
  chroot "$r" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    /bin/sh -c 'cd "$1" && shift && exec "$@"' _ "$cwd" "$@" || status=$?
  exit "$status"
fi

mkdir -p "$(dirname "$root")"
exec 9>"$root.lock"
flock 9
if [ "$(cat "$root/.shutter-packages" 2>/dev/null)" != "$(stamp_text)" ]; then
  command -v debootstrap >/dev/null || { echo "debian-root: debootstrap is not installed (run Deploy/setup.sh)" >&2; exit 1; }
  make_root
fi
[ "$1" = --make ] && exit 0
flock -s 9   # runs share the root; a remake waits for them

cwd=$PWD
case "$cwd/" in "$tree"/*) ;; *) cwd=$tree ;; esac
scratch=${SWIFT_SCRATCH:-.build-$suite}
if [ "$1" = swift ] && { [ "${2:-}" = build ] || [ "${2:-}" = test ] || [ "${2:-}" = run ]; }; then
  extra=()
  # sid's swiftlang (6.2.3) ships the _Testing_Foundation overlay's module but not its library,
  # so any test target importing both Testing and Foundation fails to link
  # ("cannot find -l_Testing_Foundation"); the tests use nothing of that overlay.
  [ "$suite" = sid ] && [ ! -e "$root/usr/libexec/swift/lib/swift/linux/lib_Testing_Foundation.so" ] &&
    extra=(-Xswiftc -Xfrontend -Xswiftc -disable-cross-import-overlays)
  set -- swift "$2" --scratch-path "$scratch" "${extra[@]}" "${@:3}"
fi
in_namespace "$root" "$cwd" "$@"
