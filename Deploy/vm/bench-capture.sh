#!/bin/bash
# Deploy/vm/bench-capture.sh - capture figures on vivid, in the same guest boot as the peers.
#
# Run inside the VM guest as root with vivid loaded, e.g. from the package root:
#   VM_CACHE=/tmp/vm-cache /work/shared/vm/run-in-vm.sh -- \
#     env SHUTTER_CAPTURE_CHECK=$PWD/.build/release/shutter-capture-check bash Deploy/vm/bench-capture.sh
# Prints, for 1280x720 and 1920x1080 YUYV:
#   - shutter: press -> JPEG on disk (fsynced, renamed) and frame -> JPEG encode (+EXIF), p50/p90/max ms
#   - fswebcam -S 0 (open, one frame, encode, write) and v4l2-ctl (open, one raw frame) wall time
#   - the zero-shutter-lag offset distribution (frame time - press time) and the frame interval
# Under TCG emulation absolute numbers are slow; compare the rows of one run with each other.
set -u
CHECK=${SHUTTER_CAPTURE_CHECK:-$(dirname "${SHUTTER:-.build/release/shutter}")/shutter-capture-check}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BOARD=$ROOT/Boards/gpio-sim.json
SHOTS=${BENCH_SHOTS:-10}
WORK=$(mktemp -d /tmp/capture-bench.XXXXXX)
cd "$WORK" || exit 1

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
# stats: reads numbers, prints "n=.. p50=.. p90=.. max=.."
stats() { sort -n | awk '{a[NR]=$1} END{if(NR==0){print "n=0"; exit}; i=int(NR*0.9+0.5); if(i<1)i=1; if(i>NR)i=NR; printf "n=%d min=%d p50=%d p90=%d max=%d ms\n", NR, a[1], a[int((NR+1)/2)], a[i], a[NR]}'; }

echo "# capture benchmark: $(uname -r), vivid, $(nproc) CPUs, binary $CHECK"
for size in 1280x720 1920x1080; do
  w=${size%x*}; h=${size#*x}
  echo "## $size YUYV"
  "$CHECK" bench --board "$BOARD" --size "$size" --format YUYV --dir "$WORK/shutter" --shots "$SHOTS" | sed 's/^/shutter: /'
  if command -v fswebcam > /dev/null; then
    for _ in $(seq 5); do
      t0=$(now_ms); fswebcam -q -d /dev/video0 -r "$size" -p YUYV -S 0 --no-banner "$WORK/fswebcam.jpg" > /dev/null 2>&1; t1=$(now_ms)
      echo $((t1 - t0))
    done | stats | sed 's/^/fswebcam -S 0 (open + 1 frame + JPEG): /'
  else
    echo "fswebcam: not installed (apt-get install fswebcam)"
  fi
  for _ in $(seq 5); do
    t0=$(now_ms)
    v4l2-ctl -d /dev/video0 --set-fmt-video=width=$w,height=$h,pixelformat=YUYV --stream-mmap --stream-count=1 --stream-to="$WORK/frame.raw" > /dev/null 2>&1
    t1=$(now_ms); echo $((t1 - t0))
  done | stats | sed 's/^/v4l2-ctl (open + 1 raw frame, no JPEG): /'
  "$CHECK" run --board "$BOARD" --size "$size" --format YUYV --dir "$WORK/zsl" --seconds 8 --press-every-ms 150 |
    grep '"event": "summary"' | sed 's/^/zero-shutter-lag: /'
  rm -rf "$WORK/shutter" "$WORK/zsl"
done
rm -rf "$WORK"
