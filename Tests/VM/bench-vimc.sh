#!/usr/bin/env bash
# bench-vimc.sh - press → JPEG through libcamera (vimc, the kernel's virtual media pipeline that
# libcamera's vimc pipeline handler drives like a camera module's), next to libcamera's own `cam`
# on the same camera in the same boot.
#
#   Tests/VM/bench-vimc.sh [--shots N] [--runs R] [--tsv FILE] [--shutter BINARY]
#   Tests/VM/bench-vimc.sh --help
#
# On the host it boots the guest (VM_VIMC=1 Deploy/vm/run-in-vm.sh: vimc, udevd, the host's
# libcamera, Debian 12's 0.0.3) and runs itself there. In the guest, at 720x480 (vimc's sides are
# multiples of 6) on 'platform/vimc.0 Sensor B':
#   - shutter-capture-check bench (beside the binary): N presses (default 5) in-process on a
#     streaming camera, each after the last photo is on disk; press → JPEG on disk p50/p90, and
#     the encode and write parts' p50, for the native libcamera backend and for the V4L2 backend
#     under libcamerify (libcamera's V4L2 compatibility layer, RGB3)
#   - `shutter capture` (start libcamera, configure, frames, JPEG on disk), both ways, R times each
#     (default 3), wall-clock
#   - `shutter run` with the libcamera backend, streaming: its peak RSS (VmHWM)
#   - `cam -c 1 --capture=2` (start libcamera, configure, 2 frames, no file), R times, wall-clock:
#     the peer. cam --capture=1 never ends on vimc (cam queues one request, vimc streams only with
#     two queued); two frames is the nearest run.
# Rows (Tests/bench.sh's format: SECTION NAME VALUE UNIT PEER PEER_VALUE RATIO), section
# press→file vimc: each of shutter's figures next to cam's p50, and cam's p50 alone. A press on a
# streaming camera skips what cam spends starting up, so its ratio is the point of keeping the
# camera streaming; `shutter capture` does what cam does and writes a JPEG too, the like-for-like
# figure. Under TCG emulation vimc makes about one frame a second: compare one run's rows.
set -uo pipefail
here=$(dirname "$(readlink -f "$0")")
root=$(cd "$here/../.." && pwd)
shots=5
runs=3
tsv=
shutter=${SHUTTER:-$root/.build/release/shutter}
while [ $# -gt 0 ]; do
  case "$1" in
    --shots) shots=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --tsv) tsv=$(realpath -m "$2"); shift 2 ;;
    --shutter) shutter=$(realpath "$2"); shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "bench-vimc: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done

if [ -z "${GPIO_SIM_DIR:-}" ]; then
  # The host: boot the guest with vimc, collect its rows.
  [ -x "$shutter" ] || { echo "bench-vimc: no $shutter (swift build -c release)" >&2; exit 2; }
  [ -x "$(dirname "$shutter")/shutter-capture-check" ] || { echo "bench-vimc: no shutter-capture-check beside $shutter" >&2; exit 2; }
  for tool in cam libcamerify; do
    command -v $tool > /dev/null || { echo "bench-vimc: $tool is not installed (Deploy/setup.sh: libcamera-tools, libcamera-v4l2)" >&2; exit 2; }
  done
  out=$(mktemp -d /tmp/bench-vimc.XXXXXX)
  trap 'rm -rf "$out"' EXIT
  cd "$root"
  VM_VIMC=1 VM_TIMEOUT=${VM_TIMEOUT:-1800} \
    Deploy/vm/run-in-vm.sh --share "$out" -- env BENCH_OUT="$out" SHUTTER="$shutter" \
      bash "$here/bench-vimc.sh" --shots "$shots" --runs "$runs"
  status=$?
  [ -n "$tsv" ] && [ -s "$out/rows.tsv" ] && cat "$out/rows.tsv" >> "$tsv"
  exit $status
fi

# ---- the guest ---------------------------------------------------------------------------
out=${BENCH_OUT:-/tmp}
check=$(dirname "$shutter")/shutter-capture-check
camera="platform/vimc.0 Sensor B"
width=720 height=480
work=$(mktemp -d /tmp/bench-vimc.XXXXXX)
cd "$work" || exit 1
cam --list > cam-list.txt 2>&1
grep -qF "($camera)" cam-list.txt || { echo "bench-vimc: libcamera sees no '$camera' (VM_VIMC=1?)"; sed 's/^/#   /' cam-list.txt | tail -5; exit 1; }
echo "# vimc bench: $(uname -r), $(nproc) CPUs (TCG), $(dpkg-query -W -f '${Package} ${Version}\n' 'libcamera0*' 2>/dev/null | awk 'NF == 2' | head -1), $shutter; host shared with other work"

board() {   # board FILE BACKEND: Boards/gpio-sim.json with the vimc camera through BACKEND
  sed -e "s|\"camera\": {.*}|\"camera\": {\"device\": \"$camera\", \"backend\": \"$2\", \"width\": $width, \"height\": $height, \"quality\": 90}|" \
      -e "s|\"directory\": \"photos\"|\"directory\": \"$work/photos\"|" "$root/Boards/gpio-sim.json" > "$1"
}
board libcamera.json libcamera
board v4l2.json v4l2
now_us() { echo $(( $(date +%s%N) / 1000 )); }
# timed FILE COMMAND...: R wall-clock runs of COMMAND, microseconds each (a failed run: none) into FILE.
timed() {
  local file=$1; shift
  : > "$file"
  for _ in $(seq "$runs"); do
    local t0 t1; t0=$(now_us)
    if timeout 60 "$@" > timed.log 2>&1; then t1=$(now_us); echo $((t1 - t0)) >> "$file"
    else echo "# failed ($*): $(tail -n 1 timed.log)"; fi
    rm -f once.jpg
  done
}

"$check" bench --board libcamera.json --dir "$work/bench" --shots "$shots" 2>&1 | grep '"event": "bench"' > bench-libcamera.json
echo "# press → JPEG, libcamera backend ${width}x${height}: $(cat bench-libcamera.json)"
libcamerify "$check" bench --board v4l2.json --dir "$work/bench" --shots "$shots" 2>&1 | grep '"event": "bench"' > bench-v4l2.json
echo "# press → JPEG, libcamerify + V4L2 backend ${width}x${height}: $(cat bench-v4l2.json)"
timed cam.us cam -c 1 --capture=2 -s width=$width,height=$height
timed capture-libcamera.us "$shutter" capture --board libcamera.json --out once.jpg
timed capture-v4l2.us libcamerify "$shutter" capture --board v4l2.json --out once.jpg
# The daemon's peak RSS with a libcamera camera streaming: libcamera, its pipeline handler and IPA
# and the backend plugin mapped, which a board without one never maps (Tests/bench-idle.py).
"$shutter" run --no-state --board libcamera.json > run-rss.log 2>&1 &
daemon=$!
for _ in $(seq 120); do grep -q '"cameraReady"' run-rss.log && break; sleep 0.5; done
sleep 3
grep -q '"cameraReady"' run-rss.log && awk '/^(VmHWM|RssAnon|RssFile):/ { print $1, $2 }' "/proc/$daemon/status" > rss.txt
kill "$daemon"; wait "$daemon" 2>/dev/null

/usr/bin/python3 - "${width}x${height}" "$out/rows.tsv" <<'PY'
import json, math, sys
size, rows_path = sys.argv[1:3]
def pct(values, p):
    """Nearest-rank percentile (p in 0..100)."""
    s = sorted(values)
    return s[max(0, math.ceil(p / 100 * len(s)) - 1)] if s else float("nan")
def times(path):
    return [int(x) / 1000 for x in open(path)]
def bench(path):
    try:
        return json.loads(open(path).read())
    except ValueError:
        return None
cam = pct(times("cam.us"), 50)
rows = open(rows_path, "a")
status = 0
def row(name, value, peer="-", peer_value=None):
    pv = "-" if peer_value is None or math.isnan(peer_value) else f"{peer_value:.3f}"
    ratio = "-" if pv == "-" or peer_value == 0 or math.isnan(value) else f"{value / peer_value:.3f}"
    rows.write(f"press→file vimc\t{name}\t{value:.3f}\tms\t{peer}\t{pv}\t{ratio}\n")
    print(f"{name}: {value:.1f} ms" + (f" ({peer} {peer_value:.1f} ms: {value / peer_value:.3f}×)" if ratio != "-" else ""))
cam_peer = "cam -c 1 --capture=2 (start, 2 frames, no file), p50"
for backend, label in (("libcamera", "libcamera backend"), ("v4l2", "libcamerify + V4L2 backend")):
    b = bench(f"bench-{backend}.json")
    if not b or not b["pressToDiskMs"]["n"]:
        rows.write(f"press→file vimc\tpress → JPEG on disk, {label}, {size}\tskipped\t-\tshutter-capture-check bench made no photo\t-\t-\n")
        status = 1
    else:
        for p in ("p50", "p90"):
            row(f"press → JPEG on disk, in-process, {label}, {size} {p}", b["pressToDiskMs"][p], cam_peer, cam)
        row(f"of which encode (frame → JPEG + EXIF), {label}, {size} p50", b["encodeMs"]["p50"])
        row(f"of which write (fsync, rename), {label}, {size} p50", b["writeMs"]["p50"])
    one = times(f"capture-{backend}.us")
    if one:
        row(f"shutter capture (start, frames, JPEG on disk), {label}, {size} p50", pct(one, 50), cam_peer, cam)
    else:
        status = 1
try:
    kb = {k.rstrip(":"): int(v) for k, v in (line.split() for line in open("rss.txt"))}
    name = (f"peak RSS, `shutter run` streaming through the libcamera backend, {size} "
            f"(own pages {kb['RssAnon'] / 1024:.1f} MiB, mapped files {kb['RssFile'] / 1024:.1f} MiB)")
    rows.write(f"press→file vimc\t{name}\t{kb['VmHWM'] / 1024:.1f}\tMiB\t-\t-\t-\n")
    print(f"{name}: {kb['VmHWM'] / 1024:.1f} MiB")
except (OSError, KeyError, ValueError):
    rows.write(f"press→file vimc\tpeak RSS, `shutter run` streaming through the libcamera backend\tskipped\t-\tthe daemon's camera was not ready (run-rss.log)\t-\t-\n")
    print("# the daemon with the libcamera backend: " + open("run-rss.log").read()[-300:])
    status = 1
if math.isnan(cam):
    status = 1
else:
    row(f"cam -c 1 --capture=2 (start libcamera, configure, 2 frames, no file), {size} p50", cam)
sys.exit(status)
PY
status=$?
rm -rf "$work"
exit $status
