#!/bin/bash
# Deploy/vm/bench-uvc.sh - capture figures on the VM's USB webcam (uvcvideo), all in one guest boot:
#
#   VM_UVC=1 Deploy/vm/run-in-vm.sh -- env SHUTTER=$PWD/.build/debug/shutter \
#     [SHUTTER_BEFORE=/path/to/older/shutter] bash Deploy/vm/bench-uvc.sh [--tsv FILE]
#
# Prints, for MJPEG 1280x720 and 1920x1080 (the camera's largest modes; 15 and 10 fps):
#   - fswebcam -S 0 (open, one frame, decode + re-encode, write) and v4l2-ctl (open, one frame to a
#     file) wall time, and shutter's press (a gpio-sim click, kernel-stamped) -> JPEG on disk
#     (the photo event's t - pressedAt), p50 of several runs, for SHUTTER (and SHUTTER_BEFORE)
#   - for SHUTTER (and SHUTTER_BEFORE): `shutter run` streaming idle at 1280x720 MJPEG: CPU time
#     over 10 idle s (/proc/PID/stat), allocations per second over the same 10 s (Deploy/vm/malloc-count.c,
#     its live counter read at both ends), peak RSS (/usr/bin/time -v)
# BENCH_ONLY=idle skips the capture timings, BENCH_ONLY=capture the idle ones; BENCH_FORMAT=YUYV
# measures idle streaming in YUYV (1280x720 at 5 fps: 1.8 MB a frame, where copies show) instead
# of MJPEG. BENCH_RUNS (default 5) is the clicks and each peer's runs a size.
# --tsv FILE (a path the host shares, run-in-vm.sh --share) appends the capture figures as rows in
# Tests/bench.sh's format (SECTION NAME VALUE UNIT PEER PEER_VALUE RATIO), section press→file UVC:
# SHUTTER's press → JPEG on disk p50 and p99 next to fswebcam -S 0's p50, its p50 next to
# v4l2-ctl's p50, and the peers' p50 alone, per size (nearest-rank percentiles).
# Under TCG emulation absolute numbers are slow and noisy; compare the rows of one run.
set -u
tsv=
while [ $# -gt 0 ]; do
  case "$1" in
    --tsv) tsv=$(realpath -m "$2"); shift 2 ;;
    *) echo "bench-uvc: unknown argument '$1' (--tsv FILE is the only one)" >&2; exit 2 ;;
  esac
done
: "${SHUTTER:?set SHUTTER to the shutter binary}"
: "${UVC_VIDEO:?boot with VM_UVC=1}"
here=$(dirname "$(readlink -f "$0")")
root=$(cd "$here/../.." && pwd)
. "$root/Tests/VM/lib.sh"
RUNS=${BENCH_RUNS:-5}
work=$(mktemp -d /tmp/uvc-bench.XXXXXX)
card="shutter UVC test camera"
for line in half full secondary pad0 pad1 pad2 pad3 pad4 pad5; do drive $line down; done
gcc -O2 -shared -fPIC -o "$work/malloc-count.so" "$here/malloc-count.c" || exit 1

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
stats() { sort -n | awk '{ a[NR] = $1 } END { if (!NR) { print "n=0"; exit } printf "n=%d min=%d p50=%d max=%d ms\n", NR, a[1], a[int((NR + 1) / 2)], a[NR] }'; }
board() {   # board NAME W H [FOURCC]: Boards/gpio-sim.json with the UVC camera in MJPEG (or FOURCC) at WxH
  sed -e "s|\"camera\": {.*}|\"camera\": {\"device\": \"$card\", \"width\": $2, \"height\": $3, \"pixelFormat\": \"${4:-MJPG}\"}|" \
      -e "s|\"directory\": \"photos\"|\"directory\": \"$work/$1\"|" "$root/Boards/gpio-sim.json" > "$work/$1.json"
  echo "$work/$1.json"
}
click() { drive half up; sleep 0.05; drive full up; sleep 0.12; drive full down; sleep 0.03; drive half down; }
wait_for() { local i; for i in $(seq $(($3 * 10))); do awk "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done; return 1; }

echo "# UVC capture benchmark: $(uname -r), $(nproc) CPUs (TCG), camera $UVC_VIDEO, shutter $SHUTTER"
for size in $([ "${BENCH_ONLY:-}" = idle ] || echo 1280x720 1920x1080); do
  w=${size%x*}; h=${size#*x}
  echo "## $size MJPEG"
  for _ in $(seq "$RUNS"); do
    t0=$(now_ms); fswebcam -q -d "$UVC_VIDEO" -r "$size" -p MJPEG -S 0 --no-banner "$work/fswebcam.jpg" > /dev/null 2>&1; t1=$(now_ms)
    [ -s "$work/fswebcam.jpg" ] && echo $((t1 - t0)); rm -f "$work/fswebcam.jpg"
  done | tee "$work/fswebcam-$size" | stats | sed 's/^/fswebcam -S 0 (open + 1 frame + decode + JPEG): /'
  for _ in $(seq "$RUNS"); do
    t0=$(now_ms)
    v4l2-ctl -d "$UVC_VIDEO" --set-fmt-video=width=$w,height=$h,pixelformat=MJPG --stream-mmap --stream-count=1 --stream-to="$work/frame.jpg" > /dev/null 2>&1
    t1=$(now_ms); [ -s "$work/frame.jpg" ] && echo $((t1 - t0)); rm -f "$work/frame.jpg"
  done | tee "$work/v4l2-ctl-$size" | stats | sed 's/^/v4l2-ctl (open + 1 frame to a file): /'
  b=$(board "shutter-$size" "$w" "$h")
  for binary in ${SHUTTER_BEFORE:+"$SHUTTER_BEFORE"} "$SHUTTER"; do
    "$binary" run --board "$b" --no-state > "$work/events" 2> "$work/run.err" &
    daemon=$!
    wait_for "$work/events" '/"event": "cameraReady"/ { r = 1 } END { exit !r }' 60
    wait_for_consumer full shutter
    sleep 1
    for _ in $(seq "$RUNS"); do click; sleep 1.2; done
    wait_for "$work/events" '/"event": "photo"/ { n++ } END { exit !(n >= '"$RUNS"') }' 20
    kill -TERM $daemon; wait $daemon
    grep '"event": "photo"' "$work/events" | sed 's/.*"t": \([0-9.]*\),.*"pressedAt": \([0-9.]*\),.*/\1 \2/' |
      awk '{ printf "%d\n", ($1 - $2) * 1000 }' | stats | sed "s|^|shutter run, $binary (gpio-sim press -> JPEG on disk): |"
    grep '"event": "photo"' "$work/events" | sed 's/.*"offsetMs": \([-0-9.]*\).*/\1/' | tr '\n' ' ' | sed 's/^/#   zero-shutter-lag offsets ms: /'; echo
  done
  # The rows: SHUTTER's photos (the last binary run), each peer's runs at this size.
  [ -n "$tsv" ] && python3 - "$size" "$work/events" "$work/fswebcam-$size" "$work/v4l2-ctl-$size" >> "$tsv" <<'PY'
import json, math, sys
size, events, fswebcam, v4l2 = sys.argv[1:5]
def pct(values, p):
    s = sorted(values)
    return s[max(0, math.ceil(p / 100 * len(s)) - 1)] if s else float("nan")
def row(name, value, peer="-", peer_value=None):
    pv = "-" if peer_value is None or math.isnan(peer_value) else f"{peer_value:.3f}"
    ratio = "-" if pv == "-" or peer_value == 0 or math.isnan(value) else f"{value / peer_value:.3f}"
    print(f"press→file UVC\t{name}\t{value:.3f}\tms\t{peer}\t{pv}\t{ratio}")
photos = [json.loads(line) for line in open(events) if '"event": "photo"' in line]
ms = [(p["t"] - p["pressedAt"]) * 1000 for p in photos]
fsw = [float(x) for x in open(fswebcam)]
raw = [float(x) for x in open(v4l2)]
if not ms:
    print(f"press→file UVC\tpress → JPEG on disk, {size} MJPEG\tskipped\t-\tno photo events\t-\t-")
    sys.exit()
for p in (50, 99):
    row(f"press → JPEG on disk, {size} MJPEG p{p}", pct(ms, p), "fswebcam -S 0, p50", pct(fsw, 50))
row(f"press → JPEG on disk, {size} MJPEG p50", pct(ms, 50), "v4l2-ctl one frame, p50", pct(raw, 50))
if fsw: row(f"fswebcam -S 0 (open, 1 frame, decode, JPEG), {size} p50", pct(fsw, 50))
if raw: row(f"v4l2-ctl (open, 1 frame to a file), {size} p50", pct(raw, 50))
PY
done

# idle BINARY SECONDS: `shutter run` streaming 1280x720 MJPEG, no presses, for SECONDS from 2 s after
# the camera is ready (the stream has started and settled): CPU time and allocations over exactly
# that window, peak RSS of the whole run.
idle() {
  local b; b=$(board idle 1280 720 "${BENCH_FORMAT:-MJPG}")
  rm -f "$work"/live.*
  MALLOC_COUNT_LIVE="$work/live" LD_PRELOAD="$work/malloc-count.so" /usr/bin/time -v -o "$work/time" \
    "$1" run --board "$b" --no-state > "$work/idle.events" 2>&1 &
  local pid=$!
  wait_for "$work/idle.events" '/"event": "cameraReady"/ { r = 1 } END { exit !r }' 60
  sleep 2
  local child; child=$(pgrep -P $pid)
  # utime + stime (fields 14, 15 of /proc/PID/stat, in clock ticks) and the live allocation count
  local ticks0 allocs0 ticks1 allocs1
  ticks0=$(awk '{ print $14 + $15 }' "/proc/$child/stat"); allocs0=$(od -An -t u8 -N8 "$work/live.$child")
  sleep "$2"
  ticks1=$(awk '{ print $14 + $15 }' "/proc/$child/stat"); allocs1=$(od -An -t u8 -N8 "$work/live.$child")
  kill -TERM "$child" 2>/dev/null || kill -TERM $pid; wait $pid
  cpu=$(awk -v a="$ticks0" -v b="$ticks1" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", (b - a) / hz }')
  allocs=$(( allocs1 - allocs0 ))
  rss=$(awk -F': ' '/Maximum resident/ { print $2 }' "$work/time")
}
[ "${BENCH_ONLY:-}" = capture ] || for binary in ${SHUTTER_BEFORE:+"$SHUTTER_BEFORE"} "$SHUTTER"; do
  idle "$binary" 10
  awk -v f="${BENCH_FORMAT:-MJPEG}" -v b="$binary" -v c="$cpu" -v a="$allocs" -v r="$rss" 'BEGIN {
    printf "idle streaming 1280x720 %s, %s: CPU %.2f s over 10 s (%.0f%%), %.0f allocations/s, peak RSS %.1f MiB\n",
      f, b, c, c * 10, a / 10, r / 1024 }'
done
rm -rf "$work"
