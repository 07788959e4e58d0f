#!/usr/bin/env bash
# bench-press.sh - press → frame and press → file on a real kernel (vivid and gpio-sim in the VM),
# next to the tools people use to take one frame from the same device in the same boot.
#
#   Tests/VM/bench-press.sh [--presses N] [--runs R] [--sizes "WxH ..."] [--tsv FILE]
#                           [--offsets FILE] [--shutter BINARY]
#   Tests/VM/bench-press.sh --help
#
# On the host it boots the guest (Deploy/vm/run-in-vm.sh: gpio-sim, and vivid as one webcam-like
# input) and runs itself there. In the guest, in one boot, for each size (default 1280x720 and
# 1920x1080, YUYV, the format vivid gives shutter by default, at the fastest rate vivid offers for
# the size: 12.5 and 5 fps):
#   - `shutter run` on Boards/gpio-sim.json with the camera at that size; N full clicks (default
#     40) driven through gpio-sim by one Python process (half, then full 50 ms later, held
#     120 ms), each after the last photo is on disk, then a pause of 300-500 ms (random, so the
#     presses fall anywhere between two frames). From each photo event:
#       offsetMs   frame start - press: the zero-shutter-lag offset (its frame's exposure start
#                  minus the full line's kernel edge timestamp)
#       t - pressedAt   press → JPEG on disk (the event is stamped once the file is fsynced and
#                  renamed into place; pressedAt is the kernel's edge time, so the confirmation
#                  window, 5 ms on this board, is inside the figure)
#   - `fswebcam -S 0 --no-banner` (open, one frame, JPEG, write) and `v4l2-ctl --stream-mmap
#     --stream-count=1 --stream-to` (open, one raw frame to a file) at the same size and format on
#     the same device, R times each (default 5), wall-clock.
# Rows (Tests/bench.sh's format: SECTION NAME VALUE UNIT PEER PEER_VALUE RATIO):
#   press→frame  |offset| p50/p99 next to half the frame interval; the same measured from the
#                middle of the frame's exposure, assuming it lasts the whole interval (vivid has
#                no exposure control; a frame's exposure is taken to fill its interval), next to
#                half the interval; the frame interval itself
#   press→file   press → JPEG on disk p50/p99 next to fswebcam's p50 (the goal: ≤ 0.1×) and
#                v4l2-ctl's p50; and where it goes: shutter-capture-check bench (beside the binary)
#                presses in-process on the same board, split into encode and write
# What the offset target means: shutter takes the frame whose exposure covers the press
# (chooseFrame in Sources/ShutterCapture/Frame.swift: started at or before the press, and the
# next one starts after it), so frame start - press lies in (-interval, 0] and, with presses at
# random phases, |offset| is uniform on [0, interval): its p99 is about 0.99 interval, never half.
# Half an interval is what a frame's middle can promise: the covering frame's middle is within
# interval/2 of the press. Both are reported.
# Every photo's offset goes to --offsets (default .build/bench/offsets.tsv: size, offsetMs,
# frameIntervalMs, bracketMs) for Tests/bench-plot.py. The binary defaults to
# .build/release/shutter. Under TCG emulation absolute times are slow; compare one run's rows.
set -uo pipefail
here=$(dirname "$(readlink -f "$0")")
root=$(cd "$here/../.." && pwd)
presses=40
runs=5
sizes="1280x720 1920x1080"
tsv=
offsets=$root/.build/bench/offsets.tsv
shutter=${SHUTTER:-$root/.build/release/shutter}
while [ $# -gt 0 ]; do
  case "$1" in
    --presses) presses=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --tsv) tsv=$(realpath -m "$2"); shift 2 ;;
    --offsets) offsets=$(realpath -m "$2"); shift 2 ;;
    --shutter) shutter=$(realpath "$2"); shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "bench-press: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done

if [ -z "${GPIO_SIM_DIR:-}" ]; then
  # The host: boot the guest, collect its rows and offsets.
  [ -x "$shutter" ] || { echo "bench-press: no $shutter (swift build -c release)" >&2; exit 2; }
  for tool in fswebcam v4l2-ctl; do
    command -v $tool > /dev/null || { echo "bench-press: $tool is not installed (Deploy/setup.sh)" >&2; exit 2; }
  done
  out=$(mktemp -d /tmp/bench-press.XXXXXX)
  trap 'rm -rf "$out"' EXIT
  cd "$root"
  VM_TIMEOUT=${VM_TIMEOUT:-1800} \
    Deploy/vm/run-in-vm.sh --share "$out" -- env BENCH_OUT="$out" SHUTTER="$shutter" \
      bash "$here/bench-press.sh" --presses "$presses" --runs "$runs" --sizes "$sizes"
  status=$?
  [ -n "$tsv" ] && [ -s "$out/rows.tsv" ] && cat "$out/rows.tsv" >> "$tsv"
  if [ -s "$out/offsets.tsv" ]; then mkdir -p "$(dirname "$offsets")"; cp "$out/offsets.tsv" "$offsets"; echo "bench-press: offsets in $offsets"; fi
  exit $status
fi

# ---- the guest ---------------------------------------------------------------------------
. "$here/lib.sh"
out=${BENCH_OUT:-/tmp}
py=/usr/bin/python3
work=$(mktemp -d /tmp/bench-press.XXXXXX)
video=$(v4l2-ctl --list-devices 2>/dev/null | awk '/vivid/ { getline; print $1; exit }')
[ -n "$video" ] || { echo "bench-press: no vivid device"; exit 1; }
for line in half full secondary pad0 pad1 pad2 pad3 pad4 pad5; do drive $line down; done
echo "# press bench: $(uname -r), $(nproc) CPUs (TCG), vivid at $video, $shutter; host shared with other work"
: > "$work/offsets.tsv"
status=0

now_ns() { date +%s%N; }

for size in $sizes; do
  w=${size%x*} h=${size#*x}
  board=$work/board-$size.json
  # The fastest rate the device offers at this size (vivid: 12.5 fps at 1280x720, 5 at 1920x1080;
  # left alone it streams at 5): the board asks for it, and the peers inherit it (vivid keeps it).
  fps=$(v4l2-ctl -d "$video" --list-frameintervals=width=$w,height=$h,pixelformat=YUYV 2>/dev/null |
        sed -n 's/.*(\([0-9.]*\) fps).*/\1/p' | sort -g | tail -1)
  $py - "$root/Boards/gpio-sim.json" "$board" "$w" "$h" "$work/photos-$size" "${fps:-}" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
b["camera"].update({"width": int(sys.argv[3]), "height": int(sys.argv[4]), "pixelFormat": "YUYV"})
if sys.argv[6]:
    b["camera"]["fps"] = float(sys.argv[6])
b["output"]["directory"] = sys.argv[5]
json.dump(b, open(sys.argv[2], "w"), indent=1)
PY
  events=$work/events-$size
  "$shutter" run --board "$board" --no-state > "$events" 2> "$work/run-$size.err" &
  daemon=$!
  if ! wait_for "$events" '/"event": "cameraReady"/ { r = 1 } END { exit !r }' 60 || ! wait_for_consumer full shutter; then
    echo "bench-press: $size: the daemon did not get ready"; sed 's/^/#   /' "$work/run-$size.err" | tail -5
    kill $daemon 2>/dev/null; wait $daemon 2>/dev/null; status=1; continue
  fi
  sleep 1  # the ring fills
  # One process drives every click and waits for each photo, and nothing else runs meanwhile: the
  # shell's way (a fork for each `sleep`, each line lookup and a `grep` of the events every 50 ms)
  # kept both emulated CPUs busy while the photo was encoded, which no rig does, and the peers'
  # runs below have no such company.
  $py - "$events" "$presses" "$size" \
      "$GPIO_SIM_DIR/sim_gpio$(line_offset half)/pull" "$GPIO_SIM_DIR/sim_gpio$(line_offset full)/pull" <<'PY'
import random, sys, time
events, presses, size, half, full = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
def drive(path, level):
    with open(path, "w") as f:
        f.write(f"pull-{level}")
log = open(events)
log.seek(0, 2)
pending, photos = "", 0
def new_photos():
    global pending
    pending += log.read()
    *lines, pending = pending.split("\n")
    return sum('"event": "photo"' in line for line in lines)
for i in range(1, presses + 1):
    # half, then full 50 ms later, held 120 ms, a person's full click
    drive(half, "up"); time.sleep(0.05); drive(full, "up"); time.sleep(0.12)
    drive(full, "down"); time.sleep(0.03); drive(half, "down")
    # Each click waits for its own photo (at most 5 s: a click the emulated kernel misread makes
    # none, and must not hold up the rest), then 300-500 ms.
    deadline = time.monotonic() + 5
    seen = 0
    while seen == 0 and time.monotonic() < deadline:
        seen = new_photos()
        if seen == 0:
            time.sleep(0.02)
    photos += seen
    time.sleep(random.uniform(0.3, 0.5))
    if i % 10 == 0:
        print(f"# {size}: {i} clicks, {photos} photos", flush=True)
PY
  kill -TERM $daemon; wait $daemon 2>/dev/null
  grep -q '"event": "captureFailed"' "$events" && { echo "# $size: captureFailed:"; grep '"event": "captureFailed"' "$events" | head -3 | sed 's/^/#   /'; }

  v4l2-ctl -d "$video" --set-fmt-video=width=$w,height=$h,pixelformat=YUYV ${fps:+--set-parm=$fps} > /dev/null 2>&1
  echo "# $size: the board asks for ${fps:-default} fps; the peers run at $(v4l2-ctl -d "$video" --get-parm 2>/dev/null | sed -n 's/.*Frames per second: *//p')"
  for _ in $(seq "$runs"); do
    rm -f "$work/fswebcam.jpg"; t0=$(now_ns)
    fswebcam -q -d "$video" -r "$size" -p YUYV -S 0 --no-banner "$work/fswebcam.jpg" > /dev/null 2>&1; t1=$(now_ns)
    [ -s "$work/fswebcam.jpg" ] && echo $(( (t1 - t0) / 1000 ))
  done > "$work/fswebcam-$size"
  for _ in $(seq "$runs"); do
    rm -f "$work/frame.raw"; t0=$(now_ns)
    v4l2-ctl -d "$video" --set-fmt-video=width=$w,height=$h,pixelformat=YUYV --stream-mmap --stream-count=1 --stream-to="$work/frame.raw" > /dev/null 2>&1
    t1=$(now_ns); [ -s "$work/frame.raw" ] && echo $(( (t1 - t0) / 1000 ))
  done > "$work/v4l2-ctl-$size"

  # Where press → JPEG goes: shutter-capture-check's bench presses in-process on the same board
  # and splits each photo's time into encode (frame → JPEG + EXIF) and write (fsync, rename).
  check=$(dirname "$shutter")/shutter-capture-check
  if [ -x "$check" ]; then "$check" bench --board "$board" --shots 10 2>&1 | grep '"event": "bench"' > "$work/inproc-$size"; fi
  $py - "$size" "$events" "$work/fswebcam-$size" "$work/v4l2-ctl-$size" "$out/rows.tsv" "$work/offsets.tsv" "$work/inproc-$size" <<'PY' || status=1
import json, math, sys
size, events, fswebcam, v4l2, rows_path, offsets_path = sys.argv[1:7]
def pct(values, p):
    """Nearest-rank percentile (p in 0..100)."""
    s = sorted(values)
    return s[max(0, math.ceil(p / 100 * len(s)) - 1)] if s else float("nan")
photos = [json.loads(line) for line in open(events) if '"event": "photo"' in line]
ready = next((json.loads(line) for line in open(events) if '"event": "cameraReady"' in line), {})
if not photos:
    print(f"bench-press: {size}: no photo events"); sys.exit(1)
offsets = [p["offsetMs"] for p in photos]
intervals = [p["frameIntervalMs"] for p in photos if "frameIntervalMs" in p]
brackets = [p["bracketMs"] for p in photos if "bracketMs" in p]
interval = pct(intervals, 50) if intervals else float("nan")
file_ms = [(p["t"] - p["pressedAt"]) * 1000 for p in photos]
fsw = [int(x) / 1000 for x in open(fswebcam)]
raw = [int(x) / 1000 for x in open(v4l2)]
mid = [abs(o + interval / 2) for o in offsets]
after = sum(1 for o in offsets if o > 0)
rows = open(rows_path, "a")
def row(section, name, value, unit, peer="-", peer_value=None, ratio=True):
    r = "-" if peer_value is None or not ratio or peer_value == 0 or math.isnan(peer_value) else f"{value / peer_value:.3f}"
    pv = "-" if peer_value is None or math.isnan(peer_value) else f"{peer_value:.3f}"
    rows.write(f"{section}\t{name}\t{value:.3f}\t{unit}\t{peer}\t{pv}\t{r}\n")
half = interval / 2
row("press→frame", f"frame interval, {size}", interval, "ms")
for p in (50, 99):
    row("press→frame", f"|offset| (frame start − press), {size} p{p}", pct([abs(o) for o in offsets], p), "ms", "half the frame interval", half)
for p in (50, 99):
    row("press→frame", f"|offset| (frame middle − press), {size} p{p}", pct(mid, p), "ms", "half the frame interval", half)
for p in (50, 99):
    row("press→file", f"press → JPEG on disk, {size} p{p}", pct(file_ms, p), "ms", "fswebcam -S 0, p50", pct(fsw, 50))
row("press→file", f"press → JPEG on disk, {size} p50", pct(file_ms, 50), "ms", "v4l2-ctl one raw frame, p50", pct(raw, 50))
row("press→file", f"fswebcam -S 0 (open, 1 frame, JPEG), {size} p50", pct(fsw, 50), "ms")
row("press→file", f"v4l2-ctl (open, 1 raw frame), {size} p50", pct(raw, 50), "ms")
try:
    inproc = json.loads(open(sys.argv[7]).read())
    for key, label in (("pressToDiskMs", "press → JPEG on disk, in-process"), ("encodeMs", "of which encode (frame → JPEG + EXIF)"),
                       ("writeMs", "of which write (fsync, rename)")):
        row("press→file", f"{label}, {size} p50", inproc[key]["p50"], "ms")
    print(f"in-process (shutter-capture-check bench, 10 presses): press → JPEG p50 {inproc['pressToDiskMs']['p50']} ms, "
          f"encode p50 {inproc['encodeMs']['p50']} ms, write p50 {inproc['writeMs']['p50']} ms")
except (OSError, ValueError, KeyError):
    print(f"# {size}: no in-process breakdown (shutter-capture-check beside the binary?)")
with open(offsets_path, "a") as f:
    for p in photos:
        f.write(f"{size}\t{p['offsetMs']}\t{p.get('frameIntervalMs', '')}\t{p.get('bracketMs', '')}\n")
print(f"## {size} {ready.get('format', '')}: {len(photos)} photos; frameAt is {photos[0].get('frameAtIs', '?')}")
print(f"frame interval (the service's): p50 {interval:.3f} ms; bracket (frames around the press) p50 {pct(brackets, 50):.3f} ms, max {max(brackets, default=float('nan')):.3f} ms ({len(brackets)} of {len(photos)} had one)")
print(f"offset (frame start − press) ms: min {min(offsets):.3f} p50 {pct(offsets, 50):.3f} max {max(offsets):.3f}; after the press: {after}")
print(f"|offset| p50 {pct([abs(o) for o in offsets], 50):.3f} p99 {pct([abs(o) for o in offsets], 99):.3f} ms; from the frame's middle p50 {pct(mid, 50):.3f} p99 {pct(mid, 99):.3f} ms; half an interval {half:.3f} ms")
print(f"press → JPEG on disk ms: p50 {pct(file_ms, 50):.1f} p99 {pct(file_ms, 99):.1f} max {max(file_ms):.1f}")
print(f"fswebcam -S 0 ms: {' '.join(f'{x:.0f}' for x in fsw)} (p50 {pct(fsw, 50):.1f}); v4l2-ctl ms: {' '.join(f'{x:.0f}' for x in raw)} (p50 {pct(raw, 50):.1f})")
print(f"press → JPEG / fswebcam: {pct(file_ms, 50) / pct(fsw, 50):.3f}× at p50 (goal ≤ 0.1×)")
PY
done
cp "$work/offsets.tsv" "$out/offsets.tsv"
for size in $sizes; do cp "$work/events-$size" "$out/" 2>/dev/null; done
exit $status
