#!/usr/bin/env bash
# bench-edge.sh - edge → event on a real kernel (gpio-sim in the VM), next to its floor.
#
#   Tests/VM/bench-edge.sh [--presses N] [--tsv FILE] [--shutter BINARY] [--compare BINARY --rounds R] [--ftrace DIR]
#   Tests/VM/bench-edge.sh --help
#
# On the host it boots the guest (Deploy/vm/run-in-vm.sh, three more gpio-sim lines named
# probe-raw, probe-mon, probe-window) and runs itself there. In the guest, in one boot:
#   - `shutter run --board Boards/gpio-sim.json --socket S`, a subscriber on S
#     (Tests/VM/probes/stamp-lines.c) that stamps CLOCK_MONOTONIC on each line as its read
#     returns, and Tests/VM/probes/edge-bench.py, which makes N full clicks (default 200) through
#     gpio-sim, edges >= 60 ms apart (closer ones are misread under emulation: /work/shared/vm/
#     NOTES.md), each after the last photo is saved: a `capture began` line's arrival minus its
#     pressedAt (the kernel's edge timestamp) is edge → event;
#   - after each click, one edge on each probe line, watched by the floor programs:
#     Tests/VM/probes/edge-floor.c (raw: kernel timestamp → read), `gpiomon` piped to
#     stamp-lines, and edge-floor --window W, which sleeps with clock_nanosleep(TIMER_ABSTIME) until
#     edge + W and reports how late it woke: the floor for a decision at the end of a window;
#     with --hop it also writes that line to a socket another process stamps on arrival: the
#     floor for a decision that reaches a subscriber (shutter's figure includes that hop).
# W is the full line's confirmation window, max(debounceMs, glitchFilterMs) from the board.
# Prints p50/p99 of: edge → subscriber (raw), its overhead beyond W, the C reader's raw
# latency, gpiomon's, the timer floor's lateness, and overhead/floor; with --tsv appends the
# rows in Tests/bench.sh's format. The binary defaults to .build/release/shutter.
#
# --compare BINARY: a before/after in one boot. The emulated machine's noise (the host's other
# work stalls its virtual CPUs for milliseconds) changes from one boot to the next, so the two
# binaries take turns: R rounds (default 4) of N/R clicks each, the daemon restarted between
# turns, the floor programs running throughout; each binary's figures against the same floor.
#
# --ftrace DIR: the kernel's scheduler events (sched_wakeup, sched_switch) and the daemon's
# socket writes during each turn, into DIR/trace-INDEX-ROUND.txt, and
# Tests/VM/probes/edge-trace.py's account of where each press's time went (timer → loop awake →
# the subscriber's write → the subscriber running, and what held its CPU) into DIR/where.txt;
# and the moment the decision leaves shutter (its sendto, T → send) next to the C timer floor:
# the same measure as the floor's (a decision in hand, no hop to another process), where the
# subscriber's arrival adds a cross-CPU wake-up that costs more than the timer under emulation.
# BENCH_FTRACE_EXTRA="raw_syscalls/sys_enter raw_syscalls/sys_exit" traces every system call too.
set -uo pipefail
here=$(dirname "$(readlink -f "$0")")
root=$(cd "$here/../.." && pwd)
presses=200
rounds=
tsv=
shutter=${SHUTTER:-$root/.build/release/shutter}
compare=${COMPARE:-}
ftrace=${BENCH_FTRACE:-}
while [ $# -gt 0 ]; do
  case "$1" in
    --presses) presses=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --tsv) tsv=$(realpath -m "$2"); shift 2 ;;
    --shutter) shutter=$(realpath "$2"); shift 2 ;;
    --compare) compare=$(realpath "$2"); shift 2 ;;
    --ftrace) ftrace=$(realpath -m "$2"); mkdir -p "$ftrace"; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "bench-edge: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
[ -n "$rounds" ] || { [ -n "$compare" ] && rounds=4 || rounds=1; }

if [ -z "${GPIO_SIM_DIR:-}" ]; then
  # The host: boot the guest with three more lines for the floor programs.
  for binary in "$shutter" $compare; do
    [ -x "$binary" ] || { echo "bench-edge: no $binary (swift build -c release)" >&2; exit 2; }
  done
  out=$(mktemp -d /tmp/bench-edge.XXXXXX)
  trap 'rm -rf "$out"' EXIT
  cd "$root"
  export VM_GPIO_NAMES="half full secondary pad0 pad1 pad2 pad3 pad4 pad5 probe-raw probe-mon probe-window"
  VM_TIMEOUT=${VM_TIMEOUT:-1800} \
    Deploy/vm/run-in-vm.sh --share "$out" -- \
      env BENCH_OUT="$out" SHUTTER="$shutter" COMPARE="$compare" BENCH_FTRACE="${ftrace:+$out}" BENCH_FTRACE_EXTRA="${BENCH_FTRACE_EXTRA:-}" VM_GPIO_NAMES="$VM_GPIO_NAMES" \
      bash "$here/bench-edge.sh" --presses "$presses" --rounds "$rounds"
  status=$?
  [ -n "$tsv" ] && [ -s "$out/rows.tsv" ] && cat "$out/rows.tsv" >> "$tsv"
  [ -n "$ftrace" ] && cp "$out"/trace-*.txt "$out"/daemon-* "$out/where.txt" "$ftrace/" 2>/dev/null
  exit $status
fi

# ---- the guest ---------------------------------------------------------------------------
. "$here/lib.sh"
out=${BENCH_OUT:-/tmp}
work=$(mktemp -d /tmp/bench-edge.XXXXXX)
board=$root/Boards/gpio-sim.json
window=$(python3 -c '
import json, sys
b = json.load(open(sys.argv[1]))
full = next(l for l in b["lines"] if l["role"] == "full")
debounce = full.get("debounceMs", b.get("lineDefaults", {}).get("debounceMs", 0))
print(max(debounce, b.get("gestures", {}).get("glitchFilterMs", 0)))' "$board")
cc -O2 -o "$work/edge-floor" "$here/probes/edge-floor.c" -lgpiod && cc -O2 -o "$work/stamp-lines" "$here/probes/stamp-lines.c" ||
  { echo "bench-edge: cannot build the probes"; exit 1; }
raw=$(line_offset probe-raw) mon=$(line_offset probe-mon) windowed=$(line_offset probe-window)
for offset in "$raw" "$mon" "$windowed"; do echo pull-down > "$GPIO_SIM_DIR/sim_gpio$offset/pull"; done
cd "$work"

"$work/edge-floor" "$GPIOCHIP" "$raw" > "$work/raw" 2> "$work/raw.err" &
floor_raw=$!
"$work/edge-floor" "$GPIOCHIP" "$windowed" --window "$window" --hop > "$work/windowed" 2> "$work/windowed.err" &
floor_window=$!
stdbuf -oL gpiomon --format='%e %s %n' "$GPIOCHIP" "$mon" 2> "$work/gpiomon.err" > >("$work/stamp-lines" > "$work/gpiomon") &
monitor=$!  # stdbuf execs gpiomon: this is gpiomon's id
wait_for_consumer probe-raw edge-floor && wait_for_consumer probe-window edge-floor && wait_for_consumer probe-mon gpiomon ||
  echo "bench-edge: a floor program did not take its line"

tracing=/sys/kernel/tracing
traced_events_on=
# The events are enabled once for the boot and stay so: enabling or disabling one patches the
# kernel's text on every CPU, and in one run the guest hung with this script's shell, the one
# that did so between turns, stuck in the kernel (an RCU stall, then a soft lockup for minutes).
# Each turn only empties the buffer and turns recording on and off.
trace_on() {
  mountpoint -q "$tracing" || mount -t tracefs nodev "$tracing"
  echo 0 > "$tracing/tracing_on"; echo > "$tracing/trace"
  if [ -z "$traced_events_on" ]; then
    echo 16384 > "$tracing/buffer_size_kb"
    echo mono > "$tracing/trace_clock"   # CLOCK_MONOTONIC: the clock of the lines' stamps
    for event in sched/sched_wakeup sched/sched_switch syscalls/sys_enter_sendto syscalls/sys_enter_sendmsg syscalls/sys_enter_write \
                 syscalls/sys_exit_read syscalls/sys_exit_ppoll ${BENCH_FTRACE_EXTRA:-}; do
      echo 1 > "$tracing/events/$event/enable"
    done
    traced_events_on=yes
  fi
  echo 1 > "$tracing/tracing_on"
}
trace_off() {
  echo 0 > "$tracing/tracing_on"
  cat "$tracing/trace" > "$1"
}

# turn BINARY INDEX ROUND CLICKS: one daemon, CLICKS clicks, its presses in daemon-INDEX-ROUND.
status=0
turn() {
  rm -f "$work/sock"
  "$1" run --board "$board" --state "$work/state.json" --socket "$work/sock" > "$work/events" 2> "$work/run-$2.err" &
  local daemon=$!
  wait_for_consumer full shutter || { echo "bench-edge: the daemon did not take the lines"; cat "$work/run-$2.err"; status=1; kill $daemon; return; }
  for _ in $(seq 100); do [ -S "$work/sock" ] && break; sleep 0.1; done
  sleep 1  # the daemon's camera opens and the ring fills before the first press
  [ -n "$ftrace" ] && trace_on
  python3 "$here/probes/edge-bench.py" drive "$work/stamp-lines" "$work/sock" "$GPIO_SIM_DIR" "$4" "$work/daemon-$2-$3" "$raw" "$mon" "$windowed" || status=1
  [ -n "$ftrace" ] && trace_off "$ftrace/trace-$2-$3.txt"
  kill "$daemon"; wait "$daemon" 2>/dev/null
  grep -i 'error\|warning' "$work/run-$2.err" | head -5
}
binaries=("$SHUTTER"); [ -n "${COMPARE:-}" ] && binaries+=("$COMPARE")
for round in $(seq "$rounds"); do
  for index in "${!binaries[@]}"; do
    turn "${binaries[$index]}" "$index" "$round" $((presses / rounds))
  done
done
kill "$floor_raw" "$floor_window" "$monitor" 2>/dev/null

for index in "${!binaries[@]}"; do
  cat "$work"/daemon-$index-* > "$work/daemon-$index"
  label=; [ ${#binaries[@]} -gt 1 ] && { label=${binaries[$index]}; echo "# $label"; }
  python3 "$here/probes/edge-bench.py" analyse "$window" "$work/daemon-$index" "$work/raw" "$work/gpiomon" "$work/windowed" "$out/rows.tsv" $label || status=1
  cp "$work/daemon-$index" "$out/" 2>/dev/null
done
cp "$work/raw" "$work/gpiomon" "$work/windowed" "$out/" 2>/dev/null
if [ -n "$ftrace" ]; then
  for index in "${!binaries[@]}"; do
    echo "# ${binaries[$index]}"
    label=; [ ${#binaries[@]} -gt 1 ] && label=${binaries[$index]}
    python3 "$here/probes/edge-trace.py" --floor "$work/windowed" --window "$window" --tsv "$out/rows.tsv" ${label:+--tag "$label"} \
      "$work/daemon-$index" "$ftrace"/trace-$index-*.txt
  done | tee "$ftrace/where.txt"
fi
exit $status
