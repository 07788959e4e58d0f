#!/usr/bin/env bash
# GPIO against a real kernel driver (gpio-sim): record, errors, active-low,
# and for libgpiod 2.x kernel debounce. Runs inside the VM (Deploy/vm/run-in-vm.sh).
set -u
here=$(dirname "$(readlink -f "$0")")
. "$here/lib.sh"
: "${SHUTTER:?set SHUTTER to the shutter binary}"
work=$(mktemp -d)
board=Boards/gpio-sim.json
major=$("$SHUTTER" --version | sed -n 's/.*built against libgpiod \([0-9]\).*/\1/p')
echo "# $("$SHUTTER" --version), chip $GPIOCHIP"

# --- record: the trace has exactly the edges driven, in order, with sane times ---
"$SHUTTER" record --board "$board" --out "$work/trace.jsonl" --seconds 30 2> "$work/record.err" &
recorder=$!
wait_for_consumer full shutter-record || not_ok "record requested the lines (gpioinfo shows consumer shutter-record)"
expected=()
step() { drive "$1" "$2"; expected+=("$1 $([ "$2" = up ] && echo true || echo false)"); sleep 0.08; }
start=$(date +%s%N)
step full up; step full down
step half up; step full up; step full down; step half down
step secondary up; step secondary down
for pad in pad0 pad1 pad2 pad3 pad4 pad5; do step $pad up; step $pad down; done
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
sleep 0.3
kill -INT $recorder; wait $recorder; status=$?
check "record exits 0 on SIGINT (status $status)" [ "$status" = 0 ]
got=$(sed -n 's/.*"line": "\([a-z0-9]*\)", "active": \([a-z]*\)}.*/\1 \2/p' "$work/trace.jsonl")
want=$(printf '%s\n' "${expected[@]}")
check "record: ${#expected[@]} edges driven, $(echo "$got" | grep -c .) recorded, same lines, levels and order" [ "$got" = "$want" ]
[ "$got" = "$want" ] || diff <(echo "$want") <(echo "$got") | head -20
times=$(sed -n 's/.*"t": \([0-9.]*\),.*/\1/p' "$work/trace.jsonl")
gaps_ok=$(echo "$times" | awk -v total="$elapsed_ms" 'NR > 1 { gap = ($1 - prev) * 1000; if (gap < 40 || gap > 2000) bad = 1 }
  { prev = $1; if (NR == 1) first = $1 } END { span = (prev - first) * 1000; if (bad || NR < 2 || span > total + 50) print "no"; else print "yes" }')
check "record: timestamps increase, edges driven 80 ms apart are 40-2000 ms apart, span within the driven ${elapsed_ms} ms" [ "$gaps_ok" = yes ]
echo "# first and last edges: $(head -n 1 "$work/trace.jsonl") ... $(tail -n 1 "$work/trace.jsonl")"
check "record: the trace replays" "$SHUTTER" replay --board "$board" --trace "$work/trace.jsonl" > "$work/replay.out"

# --- a busy line names the program holding it ---
drive full down
# The gpioset on the host (not the library under test) decides the syntax.
if gpioset --version | grep -q 'v1\.'; then gpioset --mode=signal "$GPIOCHIP" "$(line_offset full)=1" & else gpioset -c "$GPIOCHIP" "$(line_offset full)=1" & fi
holder=$!
wait_for_consumer full gpioset
"$SHUTTER" record --board "$board" --seconds 1 > /dev/null 2> "$work/busy.err"; status=$?
kill $holder 2>/dev/null; wait $holder 2>/dev/null
check "busy line: exit status 1 (got $status)" [ "$status" = 1 ]
check "busy line: the error names the line and its holder: $(cat "$work/busy.err")" grep -q "line 'full'.*busy.*gpioset" "$work/busy.err"

# --- a line that is not on the chip: the error lists the chip's line names ---
sed 's/"line": "pad5"/"line": "pad9"/' "$board" > "$work/missing-line.json"
"$SHUTTER" record --board "$work/missing-line.json" --seconds 1 > /dev/null 2> "$work/missing.err"; status=$?
check "missing line: exit status 1 (got $status)" [ "$status" = 1 ]
check "missing line: the error names it and lists the lines: $(cat "$work/missing.err")" \
  grep -q "no line named 'pad9'.*half, full, secondary, pad0, pad1, pad2, pad3, pad4, pad5" "$work/missing.err"

# --- a chip that does not exist: the error lists the chips and their labels ---
sed 's/"chip": "rig-sim"/"chip": "pinctrl-rp1"/' "$board" > "$work/missing-chip.json"
"$SHUTTER" record --board "$work/missing-chip.json" --seconds 1 > /dev/null 2> "$work/chip.err"; status=$?
check "missing chip: exit status 1 and the chips listed: $(head -c 300 "$work/chip.err")" \
  bash -c "[ $status = 1 ] && grep -q \"label 'rig-sim'\" '$work/chip.err'"

# --- permission denied: says which group or udev rule grants access ---
# /dev/gpiochipN is root-only in the guest, as on a Debian system without the udev rule.
# nobody gets its own copy of the binary and the board (as test-capture.sh does): the checkout
# may sit in a private (0700) directory, and then nobody could not even start it.
nobody_dir=$(mktemp -d /tmp/gpio-nobody.XXXXXX) && chmod 755 "$nobody_dir"
cp "$SHUTTER" "$nobody_dir/shutter" && cp "$board" "$nobody_dir/board.json" && chmod 755 "$nobody_dir/shutter" && chmod 644 "$nobody_dir/board.json"
# with the libcamera backend beside it, as the build has it (the binary looks for it there).
install -m 644 "$(dirname "$SHUTTER")/libshutter-libcamera.so" "$nobody_dir/"
# and of the libraries it finds outside the system's directories (the 2.x build's libgpiod.so.3
# lives in the checkout, found through LD_LIBRARY_PATH or the binary's run path).
mkdir "$nobody_dir/lib"
ldd "$SHUTTER" | awk '$3 ~ /^\// && $3 !~ /^\/(usr\/)?lib\// && $3 !~ /^\/opt\// { print $3 }' | xargs -r cp -L -t "$nobody_dir/lib"
chmod -R a+rX "$nobody_dir/lib"
export LD_LIBRARY_PATH="$nobody_dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "# /dev/$GPIOCHIP: $(stat -c '%a %U:%G' "/dev/$GPIOCHIP"); nobody runs $nobody_dir/shutter: $(setpriv --reuid=65534 --regid=65534 --clear-groups "$nobody_dir/shutter" --version 2>&1 | head -c 120)"
(cd / && setpriv --reuid=65534 --regid=65534 --clear-groups "$nobody_dir/shutter" record --board "$nobody_dir/board.json" --seconds 1) > /dev/null 2> "$work/denied.err"; status=$?
check "permission denied: exit 1, names the gpio group and the udev rule: $(cat "$work/denied.err")" \
  bash -c "[ $status = 1 ] && grep -q 'permission denied.*gpio.*99-shutter.rules' '$work/denied.err'"
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH#"$nobody_dir/lib"}; LD_LIBRARY_PATH=${LD_LIBRARY_PATH#:}
rm -rf "$nobody_dir"

# --- check resolves the lines on the chip ---
"$SHUTTER" check "$board" > "$work/check.out"
check "check: finds chip rig-sim and resolves pad5 to offset 8" grep -q "pad5 .*\[offset 8\]" "$work/check.out"

# --- active-low: the logical level is the inverse of the pin ---
sed 's/"activeLow": false/"activeLow": true/' "$board" > "$work/active-low.json"
drive full down
"$SHUTTER" record --board "$work/active-low.json" --out "$work/low.jsonl" --seconds 30 2> /dev/null &
recorder=$!
wait_for_consumer full shutter-record
drive full up; sleep 0.1; drive full down; sleep 0.2
kill -INT $recorder; wait $recorder
got=$(sed -n 's/.*"line": "\([a-z0-9]*\)", "active": \([a-z]*\)}.*/\1 \2/p' "$work/low.jsonl" | tr '\n' ' ')
check "active-low: pin high then low records 'full false' then 'full true' (got: $got)" [ "$got" = "full false full true " ]

# --- lost edges: stop the reader, overflow the kernel's queue, and see it reported ---
# No debounce here: on 2.x the kernel would merge the fast toggles instead of queueing them.
sed 's/"debounceMs": 5/"debounceMs": 0/' "$board" > "$work/no-debounce.json"
"$SHUTTER" record --board "$work/no-debounce.json" --out "$work/overflow.jsonl" --seconds 60 2> "$work/overflow.err" &
recorder=$!
wait_for_consumer pad0 shutter-record
kill -STOP $recorder
# 1.6's kernel queue holds 16 events a line; shutter asks 2.x for 64 a line (576 here),
# which the kernel rounds up to a power of two (1024).
toggles=$([ "$major" = 1 ] && echo 41 || echo 2101)
sim=$GPIO_SIM_DIR/sim_gpio$(line_offset pad0)/pull
for ((i = 0; i < toggles; i++)); do
  if ((i % 2 == 0)); then echo pull-up > "$sim"; else echo pull-down > "$sim"; fi
done
kill -CONT $recorder
sleep 0.3; echo pull-down > "$sim"; sleep 0.3; echo pull-up > "$sim"; sleep 0.3; echo pull-down > "$sim"; sleep 0.3
kill -INT $recorder; wait $recorder
recorded=$(grep -c pad0 "$work/overflow.jsonl")
check "lost edges: $((toggles + 3)) driven while the reader was stopped, $recorded recorded, loss reported: $(grep -m1 dropped "$work/overflow.err")" \
  grep -q "dropped [0-9]* edges" "$work/overflow.err"
# At least MIN edges: the kernel queue's worth kept while the reader was stopped (16 a line on
# 1.6, 1024 on 2.x, less what a loaded emulator merges) and the 3 driven after; an empty or
# near-empty trace alternates trivially.
min_edges=$([ "$major" = 1 ] && echo 12 || echo 500)
check "lost edges: levels in the trace still alternate ($recorded edges, at least $min_edges), ending with the 3 driven after the reader resumed" \
  bash -c "levels=\$(sed -n 's/.*\"line\": \"pad0\", \"active\": \([a-z]*\)}.*/\1/p' '$work/overflow.jsonl')
           [ \$(grep -c . <<< \"\$levels\") -ge $min_edges ] && ! uniq -d <<< \"\$levels\" | grep -q . &&
           [ \"\$(tail -n 3 <<< \"\$levels\" | tr '\n' ' ')\" = 'false true false ' ]"

# --- 2.x only: the kernel debounces pads, so a pulse shorter than the period is no edge ---
# Only pads on a rig with `half`: a kernel-debounced edge is stamped when the period has passed, which
# would make a button's press late (see the press-instant check below).
if [ "$major" = 2 ]; then
  sed 's/"debounceMs": 5/"debounceMs": 100/' "$board" > "$work/debounce.json"
  drive pad0 down; drive full down
  "$SHUTTER" record --board "$work/debounce.json" --out "$work/debounce.jsonl" --seconds 30 2> /dev/null &
  recorder=$!
  wait_for_consumer pad0 shutter-record
  sleep 0.3
  # Pulses of well under a millisecond (bounce): two builtin writes, no fork between them, so a
  # loaded emulator cannot stretch them towards the debounce period.
  pull=$GPIO_SIM_DIR/sim_gpio$(line_offset pad0)/pull
  echo pull-up > "$pull"; echo pull-down > "$pull"
  pull=$GPIO_SIM_DIR/sim_gpio$(line_offset full)/pull  # a button: software debounce, so it is recorded
  echo pull-up > "$pull"; echo pull-down > "$pull"
  sleep 0.5
  drive pad0 up; sleep 0.5; drive pad0 down # a real touch of 500 ms
  sleep 0.5
  kill -INT $recorder; wait $recorder
  got=$(sed -n 's/.*"line": "\([a-z0-9]*\)", "active": \([a-z]*\)}.*/\1 \2/p' "$work/debounce.jsonl" | tr '\n' ' ')
  # The button's sub-millisecond pulse may reach the reader or not (gpio-sim can raise both edges
  # before the interrupt thread reads the level); the pad's never does.
  check "kernel debounce (100 ms) on pads only: a ~1 ms pad pulse gives no edge, a 500 ms touch gives two (got: $got)" \
    bash -c "[ '$got' = 'full true full false pad0 true pad0 false ' ] || [ '$got' = 'pad0 true pad0 false ' ]"
else
  skip "kernel debounce on pads: libgpiod $major.x has no debounce setting (2.x only)"
fi

# --- press instants: pressedAt/releasedAt are the instants the lines were driven, on both APIs ---
# Every line debounced 40 ms: a press stamped by kernel debounce would read 40 ms late. The driver
# stamps CLOCK_MONOTONIC (the clock the kernel stamps edges with) just before each write to gpio-sim.
sed -e 's/"debounceMs": 5/"debounceMs": 40/' \
    -e 's/"device": "vivid", "width": 1280, "height": 720/"device": "synthetic", "width": 320, "height": 240/' \
    -e "s|\"directory\": \"photos\"|\"directory\": \"$work/photos\"|" "$board" > "$work/timing.json"
drive half down; drive full down
"$SHUTTER" run --board "$work/timing.json" --no-state > "$work/timing.events" 2> "$work/timing.err" < /dev/null &
daemon=$!
wait_for_consumer full shutter || not_ok "run requested the lines"
sleep 0.5
HALF=$(line_offset half) FULL=$(line_offset full) /usr/bin/python3 - > "$work/driven" <<'PY'
import os, time
base = os.environ["GPIO_SIM_DIR"]
def drive(offset, up, what):
    fd = os.open(f"{base}/sim_gpio{offset}/pull", os.O_WRONLY)
    before = time.clock_gettime(time.CLOCK_MONOTONIC)
    os.write(fd, b"pull-up" if up else b"pull-down")
    after = time.clock_gettime(time.CLOCK_MONOTONIC)
    os.close(fd)
    if what: print(what, f"{before:.6f}", f"{after:.6f}", flush=True)
half, full = int(os.environ["HALF"]), int(os.environ["FULL"])
for _ in range(3):       # full clicks: capture began pressedAt, capture ended releasedAt
    drive(half, True, None); time.sleep(0.1)
    drive(full, True, "capture-began"); time.sleep(0.3)
    drive(full, False, "capture-ended"); time.sleep(0.1)
    drive(half, False, None); time.sleep(0.8)
drive(half, True, "prepare"); time.sleep(0.8)      # half held: prepare began carries its pressedAt
drive(half, False, None); time.sleep(0.5)
PY
sleep 0.5
kill -INT $daemon; wait $daemon
lateness=$(/usr/bin/python3 - "$work/driven" "$work/timing.events" <<'PY'
import json, sys
driven = [line.split() for line in open(sys.argv[1])]
events = [json.loads(line) for line in open(sys.argv[2]) if line.startswith("{")]
stamps = {"capture-began": [e["pressedAt"] for e in events if e["event"] == "capture" and e["phase"] == "began"],
          "capture-ended": [e.get("releasedAt") for e in events if e["event"] == "capture" and e["phase"] == "ended"],
          "prepare": [e["pressedAt"] for e in events if e["event"] == "prepare" and e["phase"] == "began"]}
out = []
for what, before, after in driven:
    # A loaded VM may hold half past prepareAfterMs before full in a click: the hold is the last prepare.
    got = (stamps[what].pop(-1) if what == "prepare" else stamps[what].pop(0)) if stamps[what] else None
    out.append("none" if got is None else f"{(got - float(before)) * 1000:.2f}")
print(" ".join(out))
PY
)
echo "# $major.x: stamp minus driven instant, ms (full: press, release ×3; half held): $lateness"
check "press instants ($major.x, debounce 40 ms): every pressedAt/releasedAt within -0.5..10 ms of the driven instant ($lateness)" \
  bash -c "echo '$lateness' | awk '{ if (NF != 7) exit 1; for (i = 1; i <= NF; i++) if (\$i == \"none\" || \$i < -0.5 || \$i > 10) exit 1 }'"

# --- monitor: edges printed live for people ---
drive half down
"$SHUTTER" monitor --board "$board" --seconds 20 > "$work/monitor.out" 2>&1 &
monitor=$!
wait_for_consumer half shutter-monitor
drive half up; sleep 0.2; drive half down; sleep 0.3
kill -INT $monitor; wait $monitor; status=$?
check "monitor: exit 0 on SIGINT and 'half pressed' then 'half released' shown (status $status)" \
  bash -c "[ $status = 0 ] && grep -q 'half  *pressed' '$work/monitor.out' && grep -q 'half  *released' '$work/monitor.out'"

rm -rf "$work"
finish
