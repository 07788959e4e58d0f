# Shared by the VM tests (sourced): TAP-like "ok"/"not ok" lines and line driving.
# Runs inside the guest; needs SHUTTER (the binary under test), GPIO_SIM_DIR.
passed=0
failed=0
ok() { echo "ok - $*"; passed=$((passed + 1)); }
not_ok() { echo "not ok - $*"; failed=$((failed + 1)); }
# skip WHY: a check that cannot run here, said out loud; Tests/run.sh counts these lines at
# its end, so a skipped safety check never passes unseen.
skipped=0
skip() { echo "skip - $*"; skipped=$((skipped + 1)); }
# photo_bounds EVENTS: a line per photo event of EVENTS, "OFFSET BRACKET ASSUMED" (offsetMs,
# bracketMs, frameIntervalMs; "none" for one the event lacks), for within_own_interval.
photo_bounds() {
  grep '"event": "photo"' "$1" | awk '
    function field(name) { return match($0, "\"" name "\": -?[0-9.]+") ? substr($0, RSTART + length(name) + 4, RLENGTH - length(name) - 4) : "none" }
    { print field("offsetMs"), field("bracketMs"), field("frameIntervalMs") }'
}
# within_own_interval FILE: each photo of photo_bounds' FILE is the frame the zero-shutter-lag
# rule takes, held as isFrameAtPress (ShutterCapture) holds it. With a bracket B (the interval
# between the frames around its press) and the interval I the service assumed, it is the frame
# before the press (offset -O with 2·O ≤ B + I: no further back than the bracket, and where frames
# were lost around the press no nearer the later frame's start than the earlier frame's end), or,
# only where frames were lost, the frame after it (offset O with 2·O < B - I: the nearer one).
# Without a bracket (saved before the frame after its press arrived) it is the frame exposing at
# the press: no later than it, starting at most I before it. Neither figure, or no photo: fails.
within_own_interval() {
  awk '{ n++
         if ($2 != "none" && $3 != "none") { if ($1 > 0 ? 2 * $1 >= $2 - $3 : -2 * $1 > $2 + $3) bad = 1 }
         else if ($2 != "none") { if ($1 > 0 || -$1 > $2) bad = 1 }
         else if ($3 != "none") { if ($1 > 0 || -$1 > $3) bad = 1 } else bad = 1 }
       END { exit !(n > 0 && !bad) }' "$1"
}
# check DESCRIPTION COMMAND...: ok when the command succeeds; otherwise not ok, with the
# command's first output lines (kept quiet when it passes). Returns the command's success.
check() {
  local what=$1 log; shift; log=$(mktemp)
  if "$@" > "$log" 2>&1; then ok "$what"; rm -f "$log"
  else not_ok "$what"; sed 's/^/#   /' "$log" | head -15; rm -f "$log"; return 1; fi
}
finish() { echo "# $(basename "$0"): $passed passed, $failed failed, $skipped skipped"; [ "$failed" = 0 ]; }

# line_offset NAME: the gpio-sim offset of a line the harness named.
line_offset() {
  local n=0
  for name in ${VM_GPIO_NAMES:-half full secondary pad0 pad1 pad2 pad3 pad4 pad5}; do
    [ "$name" = "$1" ] && { echo $n; return; }
    n=$((n + 1))
  done
  echo "no line $1" >&2; return 1
}
# drive NAME up|down: pull a gpio-sim line high or low, as a button or pad would.
drive() { echo "pull-$2" > "$GPIO_SIM_DIR/sim_gpio$(line_offset "$1")/pull"; }

# light_press_then_swipe: a light press on half (shows the controls), then a swipe across
# pad0..pad3 (changes the current control), as a person does them.
light_press_then_swipe() {
  drive half up; sleep 0.15; drive half down; sleep 0.6
  swipe_pads
}

# swipe_pads: a finger across pad0..pad3, 70 ms a pad, then lifted.
swipe_pads() {
  for pad in pad0 pad1 pad2 pad3; do drive $pad up; sleep 0.07; done
  for pad in pad0 pad1 pad2 pad3; do drive $pad down; done
}

# wait_for FILE AWK-PROGRAM SECONDS: until the awk program exits 0 on FILE (runs end on what
# they show, not on a clock).
wait_for() {
  local i
  for i in $(seq $(($3 * 10))); do awk "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  return 1
}

# wait_for_consumer NAME CONSUMER: until the line shows as used by CONSUMER (max ~10 s), on
# $GPIOCHIP as it is at the call (a suite may make a chip of its own after sourcing this).
# gpioinfo 1.6 takes the chip as its argument, 2.x with -c (a bare argument is a line name);
# both print the line's name and its consumer in double quotes.
gpioinfo_takes_chip_option=yes
gpioinfo --version 2>/dev/null | grep -q 'v1\.' && gpioinfo_takes_chip_option=no
wait_for_consumer() {
  local chip=("${GPIOCHIP:-}")
  [ "$gpioinfo_takes_chip_option" = yes ] && chip=(-c "${GPIOCHIP:-}")
  for _ in $(seq 100); do
    gpioinfo "${chip[@]}" 2>/dev/null | grep -q "\"$1\".*\"$2\"" && return 0
    sleep 0.1
  done
  return 1
}
