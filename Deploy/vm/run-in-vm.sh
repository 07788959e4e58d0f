#!/usr/bin/env bash
# run-in-vm.sh - run a command inside a throw-away qemu guest with a real kernel
# GPIO driver (the mock chip gpio-sim) and a virtual camera (vivid) loaded.
#
#   Deploy/vm/run-in-vm.sh [--share DIR] [--root DIR] [--timeout SECONDS] [--] COMMAND [ARGS...]
#   Deploy/vm/run-in-vm.sh --help
#
# The guest boots Debian's own kernel under TCG (software emulation: nested KVM
# does not work on the CI machines) and sees:
#   /        the host's / read-only (virtio-9p) under a tmpfs overlay: writes work
#            and vanish at power-off; binaries built on the host run unchanged
#   DIR      the share (default: the current directory), writable, at the same path
# With --root DIR the guest's / is DIR instead of the host's / (the same read-only share under
# a tmpfs overlay), e.g. a Debian root of Deploy/debian-root.sh (trixie, sid), so the tests run against
# its libgpiod and libcamera with a binary built in it. The kernel stays the host's: its
# /lib/modules/KVER and the module cache below are shared into the guest at their paths. DIR
# needs bash, kmod and what COMMAND runs (Deploy/debian-root.sh installs the gpio and
# libcamera suites' tools); VM_UVC is not offered there.
# COMMAND runs as root under bash in the current directory, after:
#   - gpio-sim is loaded with one live chip labelled $VM_GPIO_LABEL (default rig-sim)
#     whose lines are named $VM_GPIO_NAMES (default: half full secondary pad0..pad5);
#     lines are driven by writing pull-up/pull-down to $GPIO_SIM_DIR/sim_gpioN/pull
#   - vivid is loaded with $VM_VIVID_OPTS (default: one webcam-like capture device)
#   - with VM_UVC=1, a USB webcam on the real uvcvideo driver (see "VM_UVC" below)
#   - with VM_VIMC=1: vimc too (the kernel's virtual media pipeline that libcamera's
#     vimc pipeline handler drives: `cam --list` shows 'platform/vimc.0 Sensor B'),
#     and systemd-udevd, with the media and video4linux devices triggered and settled
#     (libcamera sees only devices udev has initialised)
# and with GPIOCHIP (gpiochipN) and GPIO_SIM_DIR exported. Its output (stdout and
# stderr merged) is printed here and its exit status is ours: 124 is a timeout,
# 255 a guest that failed before COMMAND ran.
#
# Needs the packages Deploy/setup.sh installs: qemu-system-x86, linux-image-amd64,
# linux-headers-amd64, linux-source-6.1, busybox-static, cpio, kmod, gcc, make.
# Debian's kernel is built without gpio-sim (CONFIG_GPIO_SIM is unset), so the
# module is compiled once from linux-source into $SHUTTER_VM_CACHE (default
# ~/.cache/shutter/vm) and reused.
#
# VM_UVC=1: a USB webcam the guest's own uvcvideo driver binds to. dummy_hcd (a virtual USB
# host and device controller) carries the UVC gadget function usb_f_uvc, rebuilt once from
# linux-source with a bulk streaming endpoint (Deploy/vm/uvc/usb_f_uvc-bulk.patch: dummy_hcd
# has no isochronous endpoints). Deploy/vm/uvc/gadget.sh lays out its modes in configfs and
# the project's feeder (Deploy/vm/uvc/feeder.c, built on the host with libturbojpeg-dev)
# answers the UVC requests and streams stamped frames. COMMAND also sees:
#   UVC_VIDEO        the uvcvideo capture node (/dev/videoN); its card: "shutter UVC test camera"
#   UVC_GADGET       the gadget's configfs directory (unplug: echo "" > $UVC_GADGET/UDC;
#                    replug: echo $UVC_UDC > $UVC_GADGET/UDC)
#   UVC_UDC          the UDC's name
#   UVC_FEEDER       the feeder binary (--read PHOTO prints the stamp a photo carries)
#   UVC_FEEDER_PID, UVC_FEEDER_LOG, UVC_CONTROL_LOG (every control SET_CUR, "NAME VALUE"),
#   UVC_FRAME_LOG    (every frame sent: "FRAME TIME FOURCC WxH BYTES SCANHASH")
#   UVC_SLOW         while this file exists the camera answers probe/commit 0.5 s late (a slow
#                    webcam: its open's format and start take seconds)
#
# VM_VIMC=1: vimc (CONFIG_VIDEO_VIMC is unset too), built once the same way. libcamera in
# the guest needs libcamera0.0.3, libcamera-ipa, libcamera-tools, libcamera-v4l2 and udev on
# the host (Deploy/setup.sh).
#
# VM_SYSTEMD=1: the guest boots systemd as PID 1 (the host's own, from its /; not with --root,
# VM_UVC or VM_VIMC), so units run as on a rig: sandboxes (DevicePolicy=, DeviceAllow=,
# RestrictAddressFamilies=...), sd_notify, the watchdog, stop timeouts, udev rules. COMMAND is
# the unit vm-command.service (root, no sandbox), started once basic.target is up; its output
# goes to the console and its exit status is ours, as without systemd. The guest also has the
# DMA heaps (/dev/dma_heap/system), which Debian's kernel leaves out (CONFIG_DMABUF_HEAPS is
# unset): drivers/dma-buf/dma-heap.c and heaps/system_heap.c from linux-source, built once into
# one module, dma-heaps.ko, and loaded before COMMAND runs.
#
# VM_SMP (default 2) emulated CPUs and VM_MEMORY (default 1G). Each emulated CPU runs on a host
# CPU of its own when the host has as many (VM_PIN=0: left to the host's scheduler), as a
# board's cores do: see "Each emulated CPU" at the boot below.
set -euo pipefail

share=$PWD
rootfs=/
timeout_s=${VM_TIMEOUT:-600}
while [ $# -gt 0 ]; do
  case "$1" in
    --share) share=$(realpath "$2"); shift 2 ;;
    --root) rootfs=$(realpath "$2"); shift 2 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    --) shift; break ;;
    -*) echo "run-in-vm: unknown option '$1' (try --help)" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { echo "run-in-vm: no command given (try --help)" >&2; exit 2; }
case "$share$rootfs" in *[[:space:],]*) echo "run-in-vm: the share and root paths may not contain spaces or commas (qemu syntax): $share $rootfs" >&2; exit 2 ;; esac
if [ "$rootfs" != / ]; then
  [ -x "$rootfs/bin/bash" ] || { echo "run-in-vm: --root $rootfs: no bin/bash there (make it with Deploy/debian-root.sh SUITE --make)" >&2; exit 2; }
  [ "${VM_UVC:-0}" = 1 ] && { echo "run-in-vm: VM_UVC=1 runs with the host's / only (its feeder is built on the host), not with --root" >&2; exit 2; }
fi
systemd_init=${VM_SYSTEMD:-0}
if [ "$systemd_init" = 1 ]; then
  [ "$rootfs" = / ] && [ "${VM_UVC:-0}" != 1 ] && [ "${VM_VIMC:-0}" != 1 ] ||
    { echo "run-in-vm: VM_SYSTEMD=1 boots the host's systemd, without --root, VM_UVC or VM_VIMC" >&2; exit 2; }
  [ -x /lib/systemd/systemd ] || { echo "run-in-vm: VM_SYSTEMD=1 needs systemd on the host (apt-get install systemd)" >&2; exit 255; }
fi

kver=${VM_KVER:-$(ls /boot/vmlinuz-* 2>/dev/null | sed 's|/boot/vmlinuz-||' | sort -V | tail -n 1)}
[ -n "$kver" ] || { echo "run-in-vm: no kernel in /boot; run Deploy/setup.sh" >&2; exit 255; }
[ -d "/lib/modules/$kver/build" ] || { echo "run-in-vm: no headers for $kver (linux-headers-$kver); run Deploy/setup.sh" >&2; exit 255; }
cache=${SHUTTER_VM_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/shutter/vm}/$kver
mkdir -p "$cache"

# ---- modules built from linux-source-6.1, each once per kernel ---------------------
# The source tarball: the installed one, else downloaded and kept in the cache (a later
# module build reuses it).
linux_source() {
  if [ -f /usr/src/linux-source-6.1.tar.xz ]; then echo /usr/src/linux-source-6.1.tar.xz; return; fi
  if [ ! -s "$cache/linux-source.tar.xz" ]; then
    (cd "$cache" && apt-get download linux-source-6.1 >/dev/null) &&
      dpkg-deb --fsys-tarfile "$cache"/linux-source-6.1_*.deb | tar -xO ./usr/src/linux-source-6.1.tar.xz > "$cache/linux-source.tar.xz.tmp" &&
      mv "$cache/linux-source.tar.xz.tmp" "$cache/linux-source.tar.xz" || return 1
  fi
  echo "$cache/linux-source.tar.xz"
}

# ---- gpio-sim.ko, built once per kernel ----------------------------------------
# A lock, since the 1.6 and 2.x test runs may start at the same time.
exec 9>"$cache/.lock"
flock 9
if [ ! -f "$cache/gpio-sim/gpio-sim.ko" ]; then
  echo "run-in-vm: building gpio-sim.ko for $kver (once)" >&2
  src=$(linux_source)
  rm -rf "$cache/gpio-sim" && mkdir -p "$cache/gpio-sim"
  tar -xJf "$src" -C "$cache/gpio-sim" --strip-components=3 --wildcards \
    '*/drivers/gpio/gpio-sim.c' '*/drivers/gpio/gpiolib.h' '*/kernel/irq/irq_sim.c'
  (
    cd "$cache/gpio-sim"
    mv gpio-sim.c gpio-sim-main.c
    # irq_sim is not built into Debian's kernel either: link it into the module.
    # It calls irq_to_desc(), which is not exported; generic_handle_irq() does the same.
    sed -i 's/handle_simple_irq(irq_to_desc(irqnum));/generic_handle_irq(irqnum);/' irq_sim.c
    printf 'obj-m := gpio-sim.o\ngpio-sim-y := gpio-sim-main.o irq_sim.o\n' > Kbuild
    make -C "/lib/modules/$kver/build" M="$PWD" modules > build.log 2>&1 || { cat build.log >&2; exit 1; }
  )
  rm -f "$cache"/linux-source*.deb
fi
# ---- VM_UVC: usb_f_uvc.ko with a bulk endpoint, and the feeder, built once per source ----
uvc_dir=
if [ "${VM_UVC:-0}" = 1 ]; then
  uvc_src=$(dirname "$(readlink -f "$0")")/uvc
  uvc_dir=$cache/uvc-$(cat "$uvc_src/usb_f_uvc-bulk.patch" "$uvc_src/feeder.c" | sha256sum | cut -c1-12)
  if [ ! -f "$uvc_dir/usb_f_uvc.ko" ] || [ ! -x "$uvc_dir/uvc-feeder" ]; then
    echo "run-in-vm: building usb_f_uvc.ko (bulk) for $kver and the UVC feeder (once)" >&2
    src=$(linux_source)
    rm -rf "$uvc_dir" && mkdir -p "$uvc_dir"
    tar -xJf "$src" -C "$uvc_dir" --strip-components=5 --wildcards '*/drivers/usb/gadget/function/*uvc*'
    (
      cd "$uvc_dir"
      patch -s -p0 < "$uvc_src/usb_f_uvc-bulk.patch"
      printf 'obj-m := usb_f_uvc.o\nusb_f_uvc-y := f_uvc.o uvc_queue.o uvc_v4l2.o uvc_video.o uvc_configfs.o\n' > Kbuild
      make -C "/lib/modules/$kver/build" M="$PWD" modules > build.log 2>&1 || { cat build.log >&2; exit 1; }
      gcc -O2 -Wall -o uvc-feeder.tmp "$uvc_src/feeder.c" -lturbojpeg && mv uvc-feeder.tmp uvc-feeder
    ) || { rm -rf "$uvc_dir"; exit 255; }
    rm -f "$cache"/linux-source*.deb
  fi
fi
# ---- vimc.ko, built once per kernel when VM_VIMC=1 ------------------------------
# Debian leaves CONFIG_VIDEO_VIMC unset; the driver builds out of tree with no patch.
if [ "${VM_VIMC:-0}" = 1 ] && [ ! -f "$cache/vimc/vimc.ko" ]; then
  echo "run-in-vm: building vimc.ko for $kver (once)" >&2
  src=$(linux_source)
  rm -rf "$cache/vimc" && mkdir -p "$cache/vimc"
  tar -xJf "$src" -C "$cache/vimc" --strip-components=5 --wildcards '*/drivers/media/test-drivers/vimc/*'
  (
    cd "$cache/vimc"
    printf 'obj-m := vimc.o\nvimc-y := %s\n' "$(ls vimc-*.c | sed 's/\.c$/.o/' | tr '\n' ' ')" > Kbuild
    make -C "/lib/modules/$kver/build" M="$PWD" modules > build.log 2>&1 || { cat build.log >&2; exit 1; }
  )
  rm -f "$cache"/linux-source*.deb
fi
# ---- dma-heaps.ko, built once per kernel when VM_SYSTEMD=1 ------------------------
# Debian's kernel has no DMA heaps (CONFIG_DMABUF_HEAPS is a bool, unset). The core and the
# system heap build out of tree as one module: both files included into one, their initcalls
# run in order from its module_init (the core has no exports to link against).
if [ "$systemd_init" = 1 ] && [ ! -f "$cache/dma-heaps/dma-heaps.ko" ]; then
  echo "run-in-vm: building dma-heaps.ko for $kver (once)" >&2
  src=$(linux_source)
  rm -rf "$cache/dma-heaps" && mkdir -p "$cache/dma-heaps"
  tar -xJf "$src" -C "$cache/dma-heaps" --strip-components=1 --wildcards \
    '*/drivers/dma-buf/dma-heap.c' '*/drivers/dma-buf/heaps/system_heap.c' '*/include/linux/dma-heap.h' '*/include/uapi/linux/dma-heap.h'
  (
    cd "$cache/dma-heaps"
    sed '/^subsys_initcall(dma_heap_init);/d' drivers/dma-buf/dma-heap.c > dma-heap-core.c
    sed '/^module_init(system_heap_create);/d' drivers/dma-buf/heaps/system_heap.c > system-heap.c
    printf '%s\n' '#include "dma-heap-core.c"' '#include "system-heap.c"' \
      'static int __init dma_heaps_init(void) { int ret = dma_heap_init(); return ret ? ret : system_heap_create(); }' \
      'module_init(dma_heaps_init);' 'MODULE_IMPORT_NS(DMA_BUF);' > dma-heaps.c
    printf 'obj-m := dma-heaps.o\nccflags-y := -I$(src)/include\n' > Kbuild
    make -C "/lib/modules/$kver/build" M="$PWD" modules > build.log 2>&1 || { cat build.log >&2; exit 1; }
  ) || { rm -rf "$cache/dma-heaps"; exit 255; }
  rm -f "$cache"/linux-source*.deb
fi
# The kernel, uncompressed once: under TCG, booting a bare vmlinux through PVH saves
# seconds of XZ decompression on every run.
kernel=$cache/vmlinux
if [ ! -s "$kernel" ]; then
  offset=$(LC_ALL=C grep -m1 -obUaP '\xfd7zXZ\x00' "/boot/vmlinuz-$kver" | cut -d: -f1 || true)
  if [ -n "$offset" ] && tail -c +$((offset + 1)) "/boot/vmlinuz-$kver" | xz -dcq > "$kernel.tmp" 2>/dev/null; [ "$(head -c 4 "$kernel.tmp" | od -An -c | tr -d ' ')" = 177ELF ]; then
    mv "$kernel.tmp" "$kernel"
  else
    rm -f "$kernel.tmp"; kernel=/boot/vmlinuz-$kver
  fi
fi
flock -u 9

# ---- the initramfs: busybox, the 9p modules, and an init that mounts host / -------
run=$(mktemp -d /tmp/shutter-vm.XXXXXX)
trap 'rm -rf "$run"' EXIT
mkdir -p "$run/initrd/bin" "$run/initrd/modules" "$run/initrd/proc" "$run/initrd/sys" "$run/initrd/dev" "$run/control"
cp /bin/busybox "$run/initrd/bin/"
modules=$(for m in virtio_pci 9pnet_virtio 9p; do modprobe -S "$kver" --show-depends "$m"; done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }')
cp $modules "$run/initrd/modules/"
echo "$modules" | xargs -n1 basename > "$run/initrd/modules/order"

cat > "$run/initrd/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
fail() { echo "vm-init: $*"; echo 255 > /control/status 2>/dev/null; poweroff -f; }
for m in $(cat /modules/order); do insmod "/modules/$m" || fail "insmod $m"; done
opts=trans=virtio,version=9p2000.L,msize=512000
mkdir -p /control /host /rw /root
mount -t 9p -o $opts control /control || fail "mount control"
. /control/env
mount -t 9p -o $opts,ro,cache=loose hostroot /host || fail "mount host /"
kmod=/host/lib/modules/$(uname -r)
if [ -n "$VMCACHE" ]; then   # --root: the kernel's modules and the module cache come from the host
  mkdir -p /kmod && mount -t 9p -o $opts,ro,cache=loose modules /kmod || fail "mount host modules"
  kmod=/kmod
fi
insmod $kmod/kernel/fs/overlayfs/overlay.ko || fail "load overlay"
mount -t tmpfs tmpfs /rw && mkdir /rw/upper /rw/work
mount -t overlay -o lowerdir=/host,upperdir=/rw/upper,workdir=/rw/work overlay /root || fail "mount overlay"
mount -t proc proc /root/proc; mount -t sysfs sys /root/sys; mount -t devtmpfs dev /root/dev
mkdir -p /root/dev/pts /root/dev/shm
ln -sf /proc/self/fd /root/dev/fd; mount -t devpts devpts /root/dev/pts; mount -t tmpfs tmpfs /root/dev/shm; mount -t tmpfs tmpfs /root/run
# Under systemd the guest's /tmp is a tmpfs of its own: its tmpfiles.d/tmp.conf (D /tmp) empties
# /tmp at boot, and on the host's / that was a walk of the host's whole /tmp (7 GB of CI clones
# and build folders on one machine) through 9p, for longer than the run's timeout.
if [ "$SYSTEMD" = 1 ]; then mount -t tmpfs tmpfs /root/tmp || fail "mount /tmp"; fi
mkdir -p "/root$SHARE" && mount -t 9p -o $opts share "/root$SHARE" || fail "mount share"
if [ -n "$VMCACHE" ]; then
  mkdir -p "/root/lib/modules/$(uname -r)" && mount --bind /kmod "/root/lib/modules/$(uname -r)" || fail "bind modules"
  mkdir -p "/root$VMCACHE" && mount -t 9p -o $opts,ro vmcache "/root$VMCACHE" || fail "mount module cache"
fi
cp /control/command.sh /root/run/command.sh
if [ "$SYSTEMD" = 1 ]; then   # VM_SYSTEMD=1: the command is a unit; systemd powers off after it
  mkdir -p /root/run/vm-control /root/run/systemd/system && mount --move /control /root/run/vm-control
  cp /root/run/vm-control/vm-command.service /root/run/vm-control/vm-command.target /root/run/systemd/system/
  # The host may be a container (/.dockerenv): systemd would think the guest is one too and
  # ignore the kernel's command line. The guest is a machine.
  rm -f /root/.dockerenv
  exec switch_root /root /lib/systemd/systemd --unit=vm-command.target --show-status=0
fi
chroot /root /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/opt/swift/usr/bin \
  /bin/bash /run/command.sh < /dev/null
echo $? > /control/status
sync; umount "/root$SHARE"; poweroff -f
INIT
chmod +x "$run/initrd/init"
(cd "$run/initrd" && find . | cpio -o -H newc --quiet | gzip -1) > "$run/initrd.gz"

printf 'SHARE=%q\n' "$share" > "$run/control/env"
vmcache=; [ "$rootfs" != / ] && vmcache=$cache
printf 'VMCACHE=%q\n' "$vmcache" >> "$run/control/env"
printf 'SYSTEMD=%q\n' "$systemd_init" >> "$run/control/env"
append="console=ttyS0 quiet panic=-1"
if [ "$systemd_init" = 1 ]; then
  # Only the command's target and what it needs (basic.target: udev, journald, tmpfiles); not
  # the host's fstab (its disks are not the guest's) nor systemd's status lines.
  append="$append systemd.unit=vm-command.target systemd.show_status=0 fstab=no"
  cat > "$run/control/vm-command.target" <<'UNIT'
[Unit]
Description=run-in-vm: the command, then power off
Requires=vm-command.service
After=vm-command.service
AllowIsolate=yes
UNIT
  cat > "$run/control/vm-command.service" <<'UNIT'
[Unit]
Description=run-in-vm: the command
Requires=basic.target
After=basic.target
SuccessAction=poweroff-immediate
FailureAction=poweroff-immediate

[Service]
Type=exec
ExecStart=/bin/bash -c 'bash /run/command.sh; echo $? > /run/vm-control/status; sync'
Environment=HOME=/root TERM=dumb LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/opt/swift/usr/bin
StandardInput=null
StandardOutput=tty
StandardError=inherit
TTYPath=/dev/ttyS0
TimeoutStartSec=infinity
UNIT
fi
label=${VM_GPIO_LABEL:-rig-sim}
names=${VM_GPIO_NAMES:-half full secondary pad0 pad1 pad2 pad3 pad4 pad5}
lines=${VM_GPIO_LINES:-$(echo $names | wc -w)}
vivid_opts=${VM_VIVID_OPTS:-n_devs=1 node_types=0x1 num_inputs=1 input_types=0x0}
{
  echo 'set -e'
  printf 'export VM_SHARE=%q\n' "$share"
  echo 'modprobe configfs'
  printf 'insmod %q\n' "$cache/gpio-sim/gpio-sim.ko"
  echo 'mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config'
  echo 'chip=/sys/kernel/config/gpio-sim/rig'
  echo 'mkdir -p $chip/bank0'
  printf 'echo %d > $chip/bank0/num_lines\n' "$lines"
  printf 'echo %q > $chip/bank0/label\n' "$label"
  n=0
  for name in $names; do
    printf 'mkdir -p $chip/bank0/line%d && echo %q > $chip/bank0/line%d/name\n' "$n" "$name" "$n"
    n=$((n + 1))
  done
  echo 'echo 1 > $chip/live'
  echo 'export GPIOCHIP=$(cat $chip/bank0/chip_name)'
  echo 'export GPIO_SIM_DIR=/sys/devices/platform/$(cat $chip/dev_name)/$GPIOCHIP'
  printf 'modprobe vivid %s\n' "$vivid_opts"
  if [ "$systemd_init" = 1 ]; then
    printf 'insmod %q\n' "$cache/dma-heaps/dma-heaps.ko"
    echo 'udevadm settle --timeout=60 || echo "run-in-vm: udevadm settle did not finish" >&2'
  fi
  if [ -n "$uvc_dir" ]; then
    # VM_UVC: the feeder must run before the UDC is bound (see Deploy/vm/uvc/gadget.sh).
    echo 'modprobe -a libcomposite dummy_hcd videodev videobuf2-v4l2 videobuf2-vmalloc videobuf2-dma-sg uvcvideo'
    printf 'insmod %q\n' "$uvc_dir/usb_f_uvc.ko"
    echo 'export UVC_GADGET=/sys/kernel/config/usb_gadget/shutter-uvc'
    printf 'bash %q $UVC_GADGET\n' "$uvc_src/gadget.sh"
    echo 'mkdir -p /run/uvc'
    printf 'export UVC_FEEDER=%q\n' "$uvc_dir/uvc-feeder"
    echo 'export UVC_FEEDER_LOG=/run/uvc/feeder.log UVC_CONTROL_LOG=/run/uvc/controls.log UVC_FRAME_LOG=/run/uvc/frames.log UVC_SLOW=/run/uvc/slow'
    echo 'setsid "$UVC_FEEDER" --gadget $UVC_GADGET/functions/uvc.0 --controls $UVC_CONTROL_LOG --frames $UVC_FRAME_LOG --slow $UVC_SLOW > $UVC_FEEDER_LOG 2>&1 < /dev/null &'
    echo 'export UVC_FEEDER_PID=$!'
    echo 'export UVC_UDC=$(ls /sys/class/udc | head -n 1); echo $UVC_UDC > $UVC_GADGET/UDC'
    echo 'UVC_VIDEO=; for _ in $(seq 300); do for v in /sys/class/video4linux/video*; do [ "$(basename "$(readlink -f $v/device/driver)")" = uvcvideo ] && [ "$(cat $v/index)" = 0 ] && UVC_VIDEO=/dev/${v##*/}; done; [ -n "$UVC_VIDEO" ] && break; sleep 0.1; done'
    echo '[ -n "$UVC_VIDEO" ] || { echo "run-in-vm: uvcvideo found no camera in 30 s"; cat $UVC_FEEDER_LOG; dmesg | grep -iE "uvc|usb|udc" | tail -n 20; exit 255; }'
    echo 'export UVC_VIDEO'
  fi
  if [ "${VM_VIMC:-0}" = 1 ]; then
    # vimc's dependencies are modules of Debian's kernel; vimc itself is the one built above.
    echo 'modprobe -a mc videodev videobuf2-common videobuf2-v4l2 videobuf2-vmalloc videobuf2-dma-contig v4l2-tpg'
    printf 'insmod %q\n' "$cache/vimc/vimc.ko"
    # udevd and udevadm refuse to work "in a chroot" (the guest's / is one) unless told to.
    echo 'export SYSTEMD_IGNORE_CHROOT=1'
    echo '/lib/systemd/systemd-udevd --daemon > /dev/null 2>&1'
    # Not fatal: under heavy load settle can time out talking to udevd; the suites check what libcamera sees.
    echo 'udevadm trigger --subsystem-match=media --subsystem-match=video4linux --action=add || echo "run-in-vm: udevadm trigger failed" >&2'
    echo 'udevadm settle --timeout=60 || echo "run-in-vm: udevadm settle did not finish" >&2'
  fi
  printf 'cd %q\n' "$PWD"
  echo 'set +e'
  printf '%q ' "$@"; echo
} > "$run/control/command.sh"

# ---- boot ---------------------------------------------------------------------------
# multidevs=remap: host / spans several filesystems, and without it their inode
# numbers collide in the guest (directories appear empty).
export_dir() { echo "-fsdev local,id=$1,path=$2,security_model=none,multidevs=remap$3 -device virtio-9p-pci,fsdev=$1,mount_tag=$1"; }
own_root=
[ "$rootfs" != / ] && own_root="$(export_dir modules "/lib/modules/$kver" ",readonly=on") $(export_dir vmcache "$cache" ",readonly=on")"
# Each emulated CPU on a host CPU of its own (VM_PIN=0: not), when there are enough. Left to the
# host's scheduler, a vCPU thread woken by the other (an IPI: a wake-up, a lock handed on) is
# often queued on the waker's host CPU, so it runs only when the waker's guest goes idle or the
# host balances at its next tick (up to 4 ms), or it preempts the waker, which may hold the lock
# it is woken to take. Measured on the 2-CPU host during bench-edge.sh (perf sched events, 15 s):
# the two vCPU threads preempted each other 638 times and waited 0.45 ms (p90) / 4 ms (p99)
# for their CPU once woken. A Pi's cores do not wait for each other.
vcpus=${VM_SMP:-2}
guest_name=shutter-vm-$$
pin_vcpus() {  # in the background: a failure here leaves the host's scheduler in charge
  set +e
  local host_cpus=() part pid tid comm threads
  for part in $(taskset -pc $$ 2> /dev/null | sed 's/.*: //; s/,/ /g'); do
    case "$part" in *-*) host_cpus+=($(seq "${part%-*}" "${part#*-}")) ;; *) host_cpus+=("$part") ;; esac
  done
  [ "${#host_cpus[@]}" -ge "$vcpus" ] || return 0
  for _ in $(seq 1 600); do
    pid=$(pgrep -f -- "^qemu-system-x86_64 -name guest=$guest_name" | head -1)
    threads=()  # "INDEX TID" of each emulated CPU's thread ("CPU INDEX/TCG")
    for tid in ${pid:+/proc/$pid/task/*}; do
      comm=$(cat "$tid/comm" 2> /dev/null) || continue
      case "$comm" in "CPU "*"/TCG") comm=${comm#CPU }; threads+=("${comm%/TCG} ${tid##*/}") ;; esac
    done
    if [ "${#threads[@]}" -ge "$vcpus" ]; then
      for part in "${threads[@]}"; do taskset -pc "${host_cpus[${part% *}]}" "${part#* }" > /dev/null; done
      return 0
    fi
    sleep 0.1
  done
}
pinning=
if [ "${VM_PIN:-1}" = 1 ]; then pin_vcpus & pinning=$!; fi
set +e
timeout -k 5 "$timeout_s" qemu-system-x86_64 -name "guest=$guest_name,debug-threads=on" \
  -accel tcg -cpu max -smp "$vcpus" -m "${VM_MEMORY:-1G}" \
  -display none -monitor none -no-reboot -nic none \
  -chardev stdio,id=console,signal=off -serial chardev:console \
  -kernel "$kernel" -initrd "$run/initrd.gz" -append "$append" \
  $(export_dir control "$run/control" "") $(export_dir hostroot "$rootfs" ",readonly=on") $own_root $(export_dir share "$share" "") \
  < /dev/null 2>&1 | sed -u -e 's/\r$//' -e '/reboot: Power down$/d'
qemu_status=${PIPESTATUS[0]}
[ -n "$pinning" ] && kill "$pinning" 2> /dev/null
set -e
[ "$qemu_status" = 124 ] && { echo "run-in-vm: timed out after ${timeout_s}s" >&2; exit 124; }
[ -f "$run/control/status" ] || { echo "run-in-vm: the guest died before reporting (qemu status $qemu_status)" >&2; exit 255; }
exit "$(cat "$run/control/status")"
