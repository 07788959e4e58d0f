#!/usr/bin/env bash
# setup.sh - install everything shutter needs on a fresh Debian 12 (bookworm) or Debian 13
# (trixie) machine, Raspberry Pi OS included: the build, the unit tests, and the qemu harness
# that runs the real-kernel tests (gpio-sim, vivid, vimc with libcamera).
#
#   Deploy/setup.sh            install (idempotent; quick when all is present)
#   Deploy/setup.sh --no-vm    leave out the VM harness's packages (qemu, kernel, sources)
#   Deploy/setup.sh --help     this text
#
# Swift: on bookworm it is expected at /opt/swift or on PATH (swift.org's toolchain); on
# trixie, when there is none, Debian's `swiftlang` (6.0.3) is installed.
# On a Raspberry Pi (arm64/armhf) and on trixie the VM harness's packages are left out by
# themselves: the harness boots Debian 12's amd64 kernel and runs on a Debian 12 amd64 machine.
#
# Runs apt-get as root (or through sudo when not root).
set -euo pipefail

vm=yes
case "${1:-}" in
  -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
  --no-vm) vm=no ;;
  "") ;;
  *) echo "setup.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
esac
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
if [ "$vm" = yes ] && [ "$(dpkg --print-architecture)" != amd64 ]; then
  echo "setup.sh: $(dpkg --print-architecture) machine: leaving out the VM harness (it runs on an amd64 Debian 12 machine)" >&2
  vm=no
fi
if [ "$vm" = yes ] && [ "$codename" != bookworm ]; then
  echo "setup.sh: ${codename:-unknown} system: leaving out the VM harness (it boots Debian 12's kernel and runs on an amd64 Debian 12 machine)" >&2
  vm=no
fi
have_swift() { command -v swift >/dev/null 2>&1 || [ -x /opt/swift/usr/bin/swift ]; }

# Build: the C libraries behind the system-library targets.
# g++: libcamera's headers are C++ and need libstdc++'s (swiftlang does not pull them in).
build_packages=(pkg-config g++ libgpiod-dev libv4l-dev libturbojpeg0-dev libexif-dev libcamera-dev libyuv-dev libmicrohttpd-dev libqrencode-dev
                libmosquitto-dev)
# On trixie Debian packages Swift 6.0.3, shutter's minimum.
[ "$codename" = trixie ] && ! have_swift && build_packages+=(swiftlang)
# Tools a rig builder uses next to shutter, and the tests use to cross-check it; tmux, in which
# the simulator test drives the terminal UI with keys.
# debootstrap: the Debian 13 and sid stages of Tests/run.sh make their roots with it.
# zbar-tools: zbarimg reads the live view's QR code back, as a phone's camera would.
# mosquitto, mosquitto-clients: the broker a multi-camera rig's nodes meet at, and the clients the
# MQTT tests read it back with; iproute2: the poor-network test's namespaces, veth pairs and netem.
tool_packages=(gpiod v4l-utils libcamera-ipa libcamera-tools tmux debootstrap zbar-tools
               mosquitto mosquitto-clients iproute2)
# The VM harness: qemu (TCG), Debian's kernel and its headers to build gpio-sim.ko,
# the kernel source it is compiled from, and what the initramfs is made of.
vm_packages=(qemu-system-x86 linux-image-amd64 linux-headers-amd64 linux-source-6.1
             busybox-static cpio gzip xz-utils kmod gcc make
             patch fswebcam time)   # VM_UVC's usb_f_uvc patch; the UVC benchmark's peer and /usr/bin/time -v
# What the guest's test scripts run from the host's /usr: socat (test-daemon's notify listener,
# as systemd's), python3 (test-gpio drives lines on time, test-uvc reads frames), strace
# (test-capture and test-daemon hold a write or an open so a kill or a status lands during it),
# dosfstools (test-photo-files makes a vfat image with mkfs.vfat: an SD card's photo partition).
vm_packages+=(socat python3 strace dosfstools)
# libcamera in the guest (Tests/VM/test-libcamera.sh, VM_VIMC=1): the vimc pipeline handler and
# its IPA, `cam`, libcamerify, and udevd (libcamera sees only devices udev has initialised).
vm_packages+=(libcamera0.0.3 libcamera-ipa libcamera-tools libcamera-v4l2 udev)
# The test machine's browser test of the live-view page (Tests/Browser), headless; and µStreamer,
# live view's peer, measured on the same vivid device in the guest (Tests/VM/test-liveview.sh).
# Not on a Pi: they come with the VM harness.
vm_packages+=(chromium chromium-driver python3-selenium ustreamer)
# Tests/bench.sh's plot of the zero-shutter-lag offsets (Tests/bench-plot.py).
vm_packages+=(gnuplot-nox)

missing=()
wanted=("${build_packages[@]}" "${tool_packages[@]}")
[ "$vm" = yes ] && wanted+=("${vm_packages[@]}")
for p in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  echo "setup.sh: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! have_swift; then
  echo "setup.sh: no Swift toolchain found (expected 'swift' on PATH or /opt/swift/usr/bin/swift)." >&2
  echo "          Install Swift 6.0 or later from swift.org (on trixie: apt install swiftlang), then run this script again." >&2
  exit 1
fi
echo "setup.sh: all packages present" >&2
