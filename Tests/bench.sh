#!/usr/bin/env bash
# bench.sh - shutter's performance in one run: one table, each figure next to its floor or
# peer measured in the same run, and the ratio.
#
#   Tests/bench.sh            build release binaries, run every part, print the table
#   Tests/bench.sh --json     the same, as JSON on standard output (the table goes to stderr)
#   Tests/bench.sh --short    CI's few seconds: every host part, briefly; the VM parts are
#                             skipped with a note; fails only when a figure was not produced
#   Tests/bench.sh --rows FILE  also keep the rows (TSV, below)
#   Tests/bench.sh --only "PART ..."  run only these parts (names below), e.g. --only press-uvc;
#                             the figures checked are those of the parts that ran
#   Tests/bench.sh --help
#
# Parts (each appends rows to one TSV; the table and the JSON are rendered from it):
#   recognizer  .build/release/shutter-bench: edges/s and ns/edge through the gesture and control
#               machines on 6, 16, 32 and 64 pads, next to the goal of 10 M edges/s, and the
#               per-edge cost of each strip over 6 pads (the goal: within 2×); and `shutter replay`
#               reading a 200 000-edge trace file on the simulator board, edges/s next to the goal
#               of 1 M (a day of rig use replays in seconds) (host)
#   daemon      .build/release/shutter-daemon-bench: start-up to READY=1, API round trip, event
#               → subscriber with 1 and 64 subscribers, idle CPU and allocations, peak RSS,
#               press → JPEG on disk (host, the synthetic camera)
#   decision    Tests/bench-decision.py: edge → `capture began` at a socket subscriber beyond the
#               confirmation window on the host's own CPU (the simulator board), next to a C
#               program's lateness on a TIMER_ABSTIME timer, and that timer's line through a socket
#               to another process; and a light press at the end of its double-press window, a
#               deadline waited for much longer than a press's window (host)
#   edge        Tests/VM/bench-edge.sh: kernel edge → `capture began` at a socket subscriber on
#               gpio-sim, next to a C libgpiod reader, gpiomon and the C timer floor for a
#               decision at the end of the confirmation window, and that timer's line through a
#               socket to another process; and, from an ftrace, the moment the decision leaves shutter (its sendto)
#               next to that floor (VM; skipped without the harness)
#   press       Tests/VM/bench-press.sh: press → frame (the zero-shutter-lag offset next to half a
#               frame interval) and press → JPEG on disk next to fswebcam and v4l2-ctl on vivid at
#               1280x720 and 1920x1080 (VM); Tests/bench-plot.py draws .build/bench/offsets.png
#   press-uvc   Deploy/vm/bench-uvc.sh --tsv: press → JPEG on disk on a USB webcam (the real
#               uvcvideo driver on a UVC gadget camera, VM_UVC=1) at 1280x720 and 1920x1080 MJPEG,
#               next to fswebcam -S 0 and v4l2-ctl on the same camera in the same boot (VM)
#   press-vimc  Tests/VM/bench-vimc.sh: press → JPEG on disk through libcamera (vimc, VM_VIMC=1),
#               the native backend and the V4L2 one under libcamerify, and `shutter capture`
#               (start, frames, JPEG), next to libcamera's `cam` starting and taking frames (VM)
#   liveview    Tests/VM/test-liveview.sh (LIVEVIEW_TSV): the HTTP live view's viewer latency
#               p50/p99, frames per viewer and CPU with 0, 1 and 16 viewers next to µStreamer's
#               (ustreamer) on the same vivid device at 640x360, 15 fps, in the same boot (VM)
#   idle        Tests/bench-idle.py: CPU, wake-ups and allocations over idle seconds (camera
#               streaming, stopped, absent), start-up to READY=1, peak RSS next to 20 MB + the
#               ring, the binary's size (host)
#   mqtt        Tests/MQTT/bench-scale.py: a rig of 3 (and, without --short, 50) nodes on the
#               simulator board and a loopback mosquitto: press → the last node's result, the
#               frames' spread next to one frame interval, CPU of the broker and the nodes
# Row format (tab-separated), one figure a row:
#   SECTION  NAME  VALUE  UNIT  PEER  PEER_VALUE  RATIO
# PEER is the floor or peer tool the figure stands next to ("-" for a figure that stands alone,
# pure computation on the host); RATIO is VALUE / PEER_VALUE. A part that cannot run adds a row
# with VALUE "skipped" and why in PEER. A new part adds a function below and a word in `parts`.
set -uo pipefail
cd "$(dirname "$(readlink -f "$0")")/.."
export PATH=/opt/swift/usr/bin:$PATH

json=no short=no keep_rows= only=
while [ $# -gt 0 ]; do
  case "$1" in
    --json) json=yes; shift ;;
    --short) short=yes; shift ;;
    --rows) keep_rows=$(realpath -m "$2"); shift 2 ;;
    --only) only=$2; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "bench.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done

work=$(mktemp -d /tmp/shutter-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
rows=$work/rows.tsv
: > "$rows"
say() { echo "bench: $*" >&2; }
row() { printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >> "$rows"; }
skip_part() { row "$1" "$2" skipped - "$3" - -; say "$1: skipped ($3)"; }

parts="recognizer daemon decision edge press press_uvc press_vimc liveview idle mqtt"
if [ -n "$only" ]; then
  for part in $only; do
    case " $parts " in *" ${part//-/_} "*) ;; *) echo "bench: no part '$part' (try --help)" >&2; exit 2 ;; esac
  done
  parts=${only//-/_}
fi

say "building release binaries (swift build -c release)"
swift build -c release >&2 || { say "the release build failed"; exit 1; }

# ---- parts -----------------------------------------------------------------------------
part_recognizer() {
  local passes=20; [ "$short" = yes ] && passes=1
  say "recognizer: shutter-bench $passes"
  .build/release/shutter-bench "$passes" > "$work/recognizer.out" || { skip_part recognizer "shutter-bench" "it failed"; return; }
  # "generated-16-pads      16 pads    123456 edges  ...  13000000 edges/s   75.0 ns/edge"
  # Each pad count's rows: edges/s next to the goal of 10 M, ns/edge next to 6 pads' (the goal: within 2×).
  awk -F'  +' '/^generated-/ {
      for (i = 1; i <= NF; i++) { if ($i ~ / pads$/) pads = $i + 0; if ($i ~ /edges\/s$/) rate[pads] = $i + 0; if ($i ~ /ns\/edge$/) ns[pads] = $i + 0 }
      order[++n] = pads }
    END { for (k = 1; k <= n; k++) { p = order[k]
            printf "recognizer\tedges/s, %d pads\t%.0f\tedges/s\tgoal\t10000000\t%.2f\n", p, rate[p], rate[p] / 10000000
            if (p != 6 && ns[6] > 0) printf "recognizer\tns/edge, %d pads\t%.1f\tns\tns/edge, 6 pads\t%.1f\t%.2f\n", p, ns[p], ns[6], ns[p] / ns[6]
            else printf "recognizer\tns/edge, %d pads\t%.1f\tns\t-\t-\t-\n", p, ns[p] } }' \
    "$work/recognizer.out" >> "$rows"
  # `shutter replay` on a trace file of the same gestures, 200 000 edges (best of 3; 1 with --short).
  local edges=200000 runs=3 run start end best=
  [ "$short" = yes ] && runs=1
  .build/release/shutter-bench --trace "$work/replay.jsonl" "$edges" Boards/simulator.json ||
    { skip_part recognizer "replay from a file" "shutter-bench --trace failed"; return; }
  say "recognizer: shutter replay of $edges edges from a file, $runs run(s)"
  for run in $(seq "$runs"); do
    start=$(date +%s%N)
    .build/release/shutter replay --board Boards/simulator.json --trace "$work/replay.jsonl" > /dev/null ||
      { skip_part recognizer "replay from a file" "shutter replay failed"; return; }
    end=$(date +%s%N)
    if [ -z "$best" ] || [ $((end - start)) -lt "$best" ]; then best=$((end - start)); fi
  done
  awk -v edges="$edges" -v ns="$best" 'BEGIN {
      rate = edges / (ns / 1e9)
      printf "recognizer\treplay from a file, %d edges\t%.0f\tedges/s\tgoal\t1000000\t%.2f\n", edges, rate, rate / 1000000 }' >> "$rows"
}

part_daemon() {
  local idle=10 brief=; [ "$short" = yes ] && idle=1 brief=1
  say "daemon: shutter-daemon-bench (idle $idle s${brief:+, SHUTTER_BENCH_SHORT})"
  SHUTTER_BENCH_SHORT=$brief .build/release/shutter-daemon-bench .build/release/shutter "$idle" > "$work/daemon.out" 2> "$work/daemon.err" ||
    { skip_part daemon "shutter-daemon-bench" "it failed: $(tail -n 1 "$work/daemon.err")"; return; }
  python3 - "$work/daemon.out" >> "$rows" <<'PY'
import re, sys
def out(name, value, unit):
    print(f"daemon\t{name}\t{value}\t{unit}\t-\t-\t-")
for line in open(sys.argv[1]):
    line = line.strip()
    if m := re.match(r"start-up to READY=1( \(camera stopped\))?: ([\d.]+) ms", line):
        out("start-up to READY=1" + (", camera stopped" if m[1] else ""), m[2], "ms")
    if m := re.match(r"(API round trip \((\w+).*?\)|event → subscriber, (\d+) subscribers?.*?\)|press → JPEG on disk, (\d+x\d+).*?\)): (.*)", line):
        name = f"API round trip, {m[2]}" if m[2] else f"event → subscriber, {m[3]} subscriber(s)" if m[3] else f"press → JPEG on disk, {m[4]}"
        for label, value in re.findall(r"(p50|p90|p99|max) ([\d.]+) ms", m[5]):
            out(f"{name} {label}", value, "ms")
    if m := re.match(r"CPU over ([\d.]+) idle s, camera (streaming|stopped).*: ([\d.]+) s", line):
        out(f"CPU per idle second, camera {m[2]}", f"{float(m[3]) / float(m[1]):.4f}", "s/s")
    if m := re.match(r"heap allocations over ([\d.]+) idle s.*\(([\d.]+)/s\)", line):
        out("heap allocations, camera streaming", m[2], "/s")
    if m := re.match(r"peak RSS \(VmHWM\).*: (\d+) kB", line):
        out("peak RSS", m[1], "kB")
PY
}

part_decision() {   # edge → event natively: the host's CPU, the simulator board, the C timer floor
  local presses=150 light=50; [ "$short" = yes ] && presses=10 light=3
  say "decision: Tests/bench-decision.py --presses $presses --light-presses $light (host)"
  python3 Tests/bench-decision.py --presses "$presses" --light-presses "$light" --tsv "$rows" >&2 ||
    skip_part decision "edge → subscriber (host, simulator)" "Tests/bench-decision.py failed"
}

part_edge() {
  if [ "$short" = yes ]; then skip_part "edge→event" "edge → subscriber (gpio-sim, VM)" "--short: the VM part takes minutes"; return; fi
  if ! command -v qemu-system-x86_64 > /dev/null || ! ls /boot/vmlinuz-* > /dev/null 2>&1; then
    skip_part "edge→event" "edge → subscriber (gpio-sim, VM)" "no VM harness (Deploy/setup.sh installs qemu and a kernel)"; return
  fi
  say "edge → event: Tests/VM/bench-edge.sh (200 presses in the VM, minutes)"
  # With --ftrace: the moment the decision leaves shutter, to put next to the C timer floor.
  local traces; traces=$(mktemp -d /tmp/bench-edge-trace.XXXXXX)
  Tests/VM/bench-edge.sh --presses 200 --tsv "$rows" --shutter .build/release/shutter --ftrace "$traces" >&2 ||
    skip_part "edge→event" "edge → subscriber (gpio-sim, VM)" "Tests/VM/bench-edge.sh failed"
  rm -rf "$traces"
}

part_mqtt() {   # a rig on one machine: press → the last node's result, 3 nodes (and 50 without --short)
  local sizes="3:20 50:20"; [ "$short" = yes ] && sizes="3:3"
  if ! command -v mosquitto > /dev/null && [ ! -x /usr/sbin/mosquitto ]; then
    skip_part mqtt "press → last node's result" "no mosquitto (Deploy/setup.sh installs it)"; return
  fi
  local size nodes shots
  for size in $sizes; do
    nodes=${size%:*} shots=${size#*:}
    say "mqtt: Tests/MQTT/bench-scale.py --nodes $nodes --shots $shots"
    SHUTTER=.build/release/shutter python3 Tests/MQTT/bench-scale.py --nodes "$nodes" --shots "$shots" > "$work/mqtt-$nodes.out" 2>&1 ||
      { skip_part mqtt "press → last node's result, $nodes nodes" "bench-scale.py failed: $(grep -m1 FAIL "$work/mqtt-$nodes.out")"; continue; }
    python3 - "$work/mqtt-$nodes.out" "$nodes" >> "$rows" <<'PY'
import re, sys
path, nodes = sys.argv[1:3]
for line in open(path):
    if m := re.match(r"# press → last result .*: p50 ([\d.]+) ms, p99 ([\d.]+) ms", line):
        for label, value in (("p50", m[1]), ("p99", m[2])):
            print(f"mqtt\tpress → last node's result, {nodes} nodes {label}\t{value}\tms\t-\t-\t-")
    if m := re.match(r"# spread .*: p50 ([\d.]+) ms, max ([\d.]+) ms", line):
        print(f"mqtt\tspread of the frames, {nodes} nodes p50\t{m[1]}\tms\tone frame interval\t33.333\t{float(m[1]) / 33.333:.2f}")
    if m := re.match(r"# CPU during the shots .*: broker ([\d.]+) % of a core; nodes total ([\d.]+) %, per node mean ([\d.]+) %", line):
        print(f"mqtt\tbroker CPU during shots, {nodes} nodes\t{m[1]}\t% of a core\t-\t-\t-")
        print(f"mqtt\tnode CPU during shots, {nodes} nodes (mean)\t{m[3]}\t% of a core\t-\t-\t-")
PY
  done
}

part_press() {   # press → frame and press → file on vivid, next to fswebcam and v4l2-ctl (VM), and the plot
  if [ "$short" = yes ]; then skip_part "press→file" "press → JPEG on vivid (VM)" "--short: the VM part takes minutes"; return; fi
  if ! command -v qemu-system-x86_64 > /dev/null || ! ls /boot/vmlinuz-* > /dev/null 2>&1; then
    skip_part "press→file" "press → JPEG on vivid (VM)" "no VM harness (Deploy/setup.sh installs qemu and a kernel)"; return
  fi
  say "press → file: Tests/VM/bench-press.sh (30 clicks a size, 3 runs of each peer, in the VM, minutes)"
  Tests/VM/bench-press.sh --presses 30 --runs 3 --tsv "$rows" --shutter .build/release/shutter >&2 ||
    { skip_part "press→file" "press → JPEG on vivid (VM)" "Tests/VM/bench-press.sh failed"; return; }
  Tests/bench-plot.py >&2 || say "press → file: no plot (gnuplot missing? Deploy/setup.sh installs gnuplot-nox)"
}

vm_harness() { command -v qemu-system-x86_64 > /dev/null && ls /boot/vmlinuz-* > /dev/null 2>&1; }

part_press_uvc() {   # press → JPEG on the USB webcam (uvcvideo on a gadget camera), next to fswebcam and v4l2-ctl (VM)
  local name="press → JPEG on the UVC webcam (VM)"
  if [ "$short" = yes ]; then skip_part "press→file UVC" "$name" "--short: the VM part takes minutes"; return; fi
  if ! vm_harness; then skip_part "press→file UVC" "$name" "no VM harness (Deploy/setup.sh installs qemu and a kernel)"; return; fi
  say "press → file, UVC: Deploy/vm/bench-uvc.sh (10 clicks a size, 10 runs of each peer, VM_UVC=1, minutes)"
  mkdir -p "$work/uvc"
  VM_UVC=1 VM_TIMEOUT=1800 Deploy/vm/run-in-vm.sh --share "$work/uvc" -- \
    env SHUTTER="$PWD/.build/release/shutter" BENCH_RUNS=10 BENCH_ONLY=capture bash Deploy/vm/bench-uvc.sh --tsv "$work/uvc/rows.tsv" >&2 &&
    [ -s "$work/uvc/rows.tsv" ] || { skip_part "press→file UVC" "$name" "Deploy/vm/bench-uvc.sh failed"; return; }
  cat "$work/uvc/rows.tsv" >> "$rows"
}

part_press_vimc() {   # press → JPEG through libcamera (vimc), both backends, next to libcamera's cam (VM)
  local name="press → JPEG through libcamera on vimc (VM)"
  if [ "$short" = yes ]; then skip_part "press→file vimc" "$name" "--short: the VM part takes minutes"; return; fi
  if ! vm_harness; then skip_part "press→file vimc" "$name" "no VM harness (Deploy/setup.sh installs qemu and a kernel)"; return; fi
  if ! command -v cam > /dev/null || ! command -v libcamerify > /dev/null; then
    skip_part "press→file vimc" "$name" "no libcamera tools (Deploy/setup.sh: libcamera-tools, libcamera-v4l2)"; return
  fi
  say "press → file, vimc: Tests/VM/bench-vimc.sh (10 presses a backend, 3 runs of each one-shot, VM_VIMC=1, minutes)"
  Tests/VM/bench-vimc.sh --shots 10 --runs 3 --tsv "$rows" --shutter .build/release/shutter >&2 ||
    skip_part "press→file vimc" "$name" "Tests/VM/bench-vimc.sh failed"
}

part_liveview() {   # HTTP live view next to µStreamer on the same vivid device, 0, 1 and 16 viewers (VM)
  local name="live view next to µStreamer (VM)"
  if [ "$short" = yes ]; then skip_part "live view" "$name" "--short: the VM part takes minutes"; return; fi
  if ! vm_harness; then skip_part "live view" "$name" "no VM harness (Deploy/setup.sh installs qemu and a kernel)"; return; fi
  if ! command -v ustreamer > /dev/null; then skip_part "live view" "$name" "no ustreamer (Deploy/setup.sh installs it)"; return; fi
  say "live view: Tests/VM/test-liveview.sh (5 s each of 0, 1 and 16 viewers, shutter then µStreamer, in the VM)"
  mkdir -p "$work/liveview"
  VM_TIMEOUT=900 Deploy/vm/run-in-vm.sh --share "$work/liveview" -- \
    env SHUTTER="$PWD/.build/release/shutter" LIVEVIEW_TSV="$work/liveview/rows.tsv" bash Tests/VM/test-liveview.sh >&2 &&
    [ -s "$work/liveview/rows.tsv" ] || { skip_part "live view" "$name" "Tests/VM/test-liveview.sh failed"; return; }
  cat "$work/liveview/rows.tsv" >> "$rows"
}

part_idle() {   # idle cost and size: CPU, wake-ups, allocations in three modes; RSS, start-up, binary
  local seconds=10; [ "$short" = yes ] && seconds=1
  say "idle: Tests/bench-idle.py --seconds $seconds"
  /usr/bin/python3 Tests/bench-idle.py --seconds "$seconds" --shutter .build/release/shutter --tsv "$rows" > "$work/idle.out" 2>&1 ||
    skip_part idle "idle cost and size" "Tests/bench-idle.py failed: $(tail -n 1 "$work/idle.out")"
}

for part in $parts; do "part_$part"; done
[ -n "$keep_rows" ] && cp "$rows" "$keep_rows"

# ---- the table (and JSON) ------------------------------------------------------------------
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
commit=$(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet HEAD 2>/dev/null || echo "+changes")
python3 - "$rows" "$json" "$short" "$only" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(uname -a)" "$cpu" "$commit" <<'PY'
import json, math, re, sys
rows_path, as_json, short, only, date, machine, cpu, commit = sys.argv[1:9]
rows = []
for line in open(rows_path):
    fields = line.rstrip("\n").split("\t")
    if len(fields) != 7:
        continue
    section, name, value, unit, peer, peer_value, ratio = fields
    number = lambda text: None if text in ("-", "") else (float(text) if text not in ("skipped",) else None)
    rows.append({"section": section, "name": name, "value": number(value), "unit": unit,
                 "peer": None if peer == "-" else peer, "peerValue": number(peer_value),
                 "ratio": number(ratio), "skipped": value == "skipped"})
header = [f"shutter bench, {date}{' (--short)' if short == 'yes' else ''}{f' (--only {only})' if only else ''}", f"machine: {machine}", f"cpu: {cpu}", f"commit: {commit}"]
def show(value, unit=""):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    text = f"{value:.3f}".rstrip("0").rstrip(".") if abs(value) < 1000 else f"{value:,.0f}"
    return f"{text} {unit}".strip()
table = [("part", "figure", "value", "floor / peer", "ratio")]
for r in rows:
    if r["skipped"]:
        table.append((r["section"], r["name"], "skipped", r["peer"] or "", ""))
    else:
        peer = f"{r['peer']}: {show(r['peerValue'], r['unit'])}" if r["peer"] else ""
        ratio = f"{r['ratio']:.2f}×" if r["ratio"] is not None and not math.isnan(r["ratio"]) else ""
        table.append((r["section"], r["name"], show(r["value"], r["unit"]), peer, ratio))
widths = [max(len(line[i]) for line in table) for i in range(5)]
text = "\n".join(header) + "\n\n" + "\n".join(
    " | ".join(cell.ljust(widths[i]) for i, cell in enumerate(line)).rstrip() for line in table)
missing = [r["name"] for r in rows if not r["skipped"] and (r["value"] is None or math.isnan(r["value"]))]
# Every figure each part must produce, as patterns of its row's name (a part that was skipped
# says so in a row of its own instead).
expected = {
    "recognizer": [f"{what}, {pads} pads" for pads in (6, 16, 32, 64) for what in ("edges/s", "ns/edge")]
                  + [r"replay from a file, \d+ edges"],
    "daemon": ["start-up to READY=1", "start-up to READY=1, camera stopped", "peak RSS",
               "CPU per idle second, camera streaming", "CPU per idle second, camera stopped"]
              + [f"{what} {p}" for what in (r"API round trip, status", r"API round trip, set",
                                            r"event → subscriber, 1 subscriber\(s\)", r"event → subscriber, 64 subscriber\(s\)")
                 for p in ("p50", "p99")]
              + [f"press → JPEG on disk, {size} {p}" for size in ("1280x720", "1920x1080") for p in ("p50", "p90", "max")],
    "press→file UVC": [f"press → JPEG on disk, {size} MJPEG p{p}" for size in ("1280x720", "1920x1080") for p in (50, 99)],
    "press→file vimc": [f"press → JPEG on disk, in-process, {b}, 720x480 p50" for b in ("libcamera backend", "libcamerify \\+ V4L2 backend")]
                       + [r"cam -c 1 --capture=2 .*, 720x480 p50"],
    "live view": [f"viewer latency, {n} viewers {p}" for n in (1, 16) for p in ("p50", "p99")]
                 + [f"server CPU, {n} viewers" for n in (0, 1, 16)],
    "mqtt": [r"press → last node's result, 3 nodes p50", r"press → last node's result, 3 nodes p99", r"spread of the frames, 3 nodes p50"],
    "edge→event": [f"{what} {p}.*" for what in ("edge → subscriber, raw", "edge → subscriber, beyond the .* window", "gpiomon edge → line",
                                                 r"edge → decision sent \(sendto, ftrace\), beyond the .* window")
                   for p in ("p50", "p99")],
    "decision": [f"{what}, beyond {window} {p} .*" for what, window in (("edge → subscriber", "the .* window"),
                                                                         ("light press → subscriber", "its .* double-press window"))
                 for p in ("p50", "p99")],
}
for section, patterns in expected.items():
    if any(r["skipped"] and r["section"] == section for r in rows):
        continue
    if only and not any(r["section"] == section for r in rows):
        continue   # a part --only left out
    for pattern in patterns:
        if not any(r["section"] == section and re.fullmatch(pattern, r["name"]) for r in rows):
            missing.append(f"{section}: {pattern}")
if as_json == "yes":
    print(text, file=sys.stderr)
    print(json.dumps({"date": date, "machine": machine, "cpu": cpu, "commit": commit, "short": short == "yes",
                      "rows": rows, "missing": missing}, indent=1, ensure_ascii=False))
else:
    print(text)
if missing:
    print("bench: figures not produced: " + "; ".join(missing), file=sys.stderr)
    sys.exit(1)
PY
