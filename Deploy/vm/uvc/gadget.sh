#!/bin/bash
# Deploy/vm/uvc/gadget.sh - the VM's USB webcam in configfs (Linux 6.1 layout), run by
# run-in-vm.sh (VM_UVC=1) in the guest, after libcomposite, dummy_hcd and the bulk usb_f_uvc
# are loaded. It does not bind the UDC: the feeder must be running first (the function stays
# disconnected until the feeder opens its node, and enumeration needs the feeder's answers).
#
#   gadget.sh GADGET_DIR        e.g. /sys/kernel/config/usb_gadget/shutter-uvc
#
# Modes (frame rates differ by format and size, so the format choice and S_PARM can be tested):
#   YUYV   640x480  30, 15 fps        1280x720  5 fps
#   MJPEG  640x480  15, 10 fps        1280x720  15, 10 fps        1920x1080  10, 5 fps
# The camera terminal offers auto exposure mode, exposure time absolute and zoom absolute, the
# processing unit brightness (the patch's ct_controls/pu_controls; the feeder answers them).
set -eu
G=$1
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
mkdir "$G"
cd "$G"
echo 0x1d6b > idVendor; echo 0x0104 > idProduct; echo 0x0100 > bcdDevice; echo 0x0200 > bcdUSB
# Miscellaneous device class with an interface association: what UVC cameras report.
echo 0xEF > bDeviceClass; echo 0x02 > bDeviceSubClass; echo 0x01 > bDeviceProtocol
mkdir strings/0x409
echo 0001 > strings/0x409/serialnumber
echo "shutter" > strings/0x409/manufacturer
echo "shutter UVC test camera" > strings/0x409/product
mkdir -p configs/c.1/strings/0x409
echo "UVC" > configs/c.1/strings/0x409/configuration
echo 500 > configs/c.1/MaxPower
F=functions/uvc.0
mkdir $F

# frame DIR WIDTH HEIGHT INTERVAL... (100 ns units, fastest first; the first is the default)
frame() {
  local dir=$1 w=$2 h=$3; shift 3
  mkdir -p "$dir"
  echo "$w" > "$dir/wWidth"; echo "$h" > "$dir/wHeight"
  echo $((w * h * 2)) > "$dir/dwMaxVideoFrameBufferSize"
  echo $((w * h * 16 * 5)) > "$dir/dwMinBitRate"; echo $((w * h * 16 * 30)) > "$dir/dwMaxBitRate"
  echo "$1" > "$dir/dwDefaultFrameInterval"
  # All intervals in ONE write(): configfs parses the whole buffer, and bash's builtin printf
  # writes line by line, so only the last line would stay.
  /usr/bin/printf '%s\n' "$@" > "$dir/dwFrameInterval"
}
frame $F/streaming/uncompressed/u/480p 640 480 333333 666666
frame $F/streaming/uncompressed/u/720p 1280 720 2000000
frame $F/streaming/mjpeg/m/480p 640 480 666666 1000000
frame $F/streaming/mjpeg/m/720p 1280 720 666666 1000000
frame $F/streaming/mjpeg/m/1080p 1920 1080 1000000 2000000
mkdir $F/streaming/header/h
ln -s $F/streaming/uncompressed/u $F/streaming/header/h/u   # bFormatIndex 1
ln -s $F/streaming/mjpeg/m $F/streaming/header/h/m          # bFormatIndex 2
for speed in fs hs ss; do ln -s $F/streaming/header/h $F/streaming/class/$speed/h; done
mkdir $F/control/header/h
for speed in fs ss; do ln -s $F/control/header/h $F/control/class/$speed/h; done
ln -s $F configs/c.1/uvc.0
