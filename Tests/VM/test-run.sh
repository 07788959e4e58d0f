#!/usr/bin/env bash
# The daemon on a real kernel chip: a full click on gpio-sim becomes capture events
# stamped with the kernel's edge time, and SIGTERM mid-press cancels the press.
set -u
here=$(dirname "$(readlink -f "$0")")
. "$here/lib.sh"
: "${SHUTTER:?set SHUTTER to the shutter binary}"
work=$(mktemp -d)
board=Boards/gpio-sim.json
for line in half full secondary pad0 pad1 pad2 pad3 pad4 pad5; do drive $line down; done

# The board's camera is vivid (found by its card name); photos go to $work/photos.
sed "s|\"directory\": \"photos\"|\"directory\": \"$work/photos\"|" "$board" > "$work/board.json"
board=$work/board.json
"$SHUTTER" run --board "$board" --state "$work/state.json" > "$work/events" 2> "$work/run.err" &
daemon=$!
wait_for_consumer full shutter || not_ok "run requested the lines"
sleep 0.3
# A light press, then a swipe across four pads, then a full click.
light_press_then_swipe
# A second swipe: if a loaded emulator stretched the light press past lightPressMaxMs (a
# prepare, not a light press), the first swipe only woke the controls, as on the phone.
sleep 0.3
swipe_pads
sleep 0.5
before=$(date +%s%N)
drive half up; sleep 0.05; drive full up; sleep 0.2; drive full down; sleep 0.05; drive half down
sleep 0.5
# Hold the full press and stop the daemon: the press must end as cancelled.
drive half up; sleep 0.05; drive full up; sleep 0.3
kill -TERM $daemon; wait $daemon; status=$?
drive full down; drive half down
echo "# events:"; sed 's/^/#   /' "$work/events"
check "run: exit 0 on SIGTERM (status $status; $(tail -c 200 "$work/run.err"))" [ "$status" = 0 ]
check "run: a light press shows the controls" grep -q '"event": "controlsActive"' "$work/events"
check "run: the swipe adjusts zoom" grep -q '"event": "controlValue", .*"control": "zoom"' "$work/events"
check "run: the full click gives capture began then ended" \
  bash -c "grep '\"event\": \"capture\"' '$work/events' | head -n 2 | tr '\n' ' ' | grep -q '\"phase\": \"began\".*\"phase\": \"ended\"'"
check "run: a press held at SIGTERM ends as cancelled (interrupted)" \
  grep -q '"event": "capture", .*"phase": "cancelled".*"reason": "interrupted"' "$work/events"
# pressedAt is the kernel's CLOCK_MONOTONIC edge time, which /proc/uptime-like clocks can't give us
# in bash; check it lies between the daemon's own decision times instead.
pressed=$(grep -m1 '"phase": "began", "action": "primary"' "$work/events" | sed 's/.*"pressedAt": \([0-9.]*\).*/\1/')
decided=$(grep -m1 '"phase": "began", "action": "primary"' "$work/events" | sed 's/.*"t": \([0-9.]*\),.*/\1/')
check "run: capture decided 5-50 ms (the glitch filter, plus scheduling) after the kernel stamped the press (pressedAt $pressed, t $decided)" \
  awk -v p="$pressed" -v t="$decided" 'BEGIN { d = (t - p) * 1000; exit !(d >= 4.9 && d <= 50) }'
check "run: control values saved on exit" grep -q '"zoom"' "$work/state.json"
check "run: the camera (vivid) was ready" grep -q '"event": "cameraReady", .*"card": "vivid' "$work/events"
photo=$(grep -m1 '"event": "photo"' "$work/events")
path=$(echo "$photo" | sed -n 's/.*"path": "\([^"]*\)".*/\1/p')
check "run: the full click made a photo event with the press's instant: $photo" \
  bash -c "[ -n '$path' ] && echo '$photo' | grep -q '\"pressedAt\": $pressed,'"
last=$(grep '"event": "photo"' "$work/events" | tail -n 1 | sed -n 's/.*"path": "\([^"]*\)".*/\1/p')
check "run: the photo is a whole JPEG (ends with FFD9) and latest.jpg points at the last photo" \
  bash -c "[ \"\$(tail -c 2 '$path' | od -An -tx1 | tr -d ' ')\" = ffd9 ] && [ \"\$(readlink '$work/photos/latest.jpg')\" = \"\$(basename '$last')\" ]"
offset=$(echo "$photo" | sed -n 's/.*"offsetMs": \(-\{0,1\}[0-9.]*\).*/\1/p')
check "run: the frame is within one vivid frame interval (200 ms at 5 fps) of the press: offsetMs $offset" \
  awk -v o="$offset" 'BEGIN { exit !(o >= -200 && o <= 200) }'
check "run: no temporary files left in the photo directory" bash -c "! ls -A '$work/photos' | grep -q '^\\.'"

# --- the one-shot commands on vivid ---
"$SHUTTER" cameras > "$work/cameras.out" 2>&1
check "cameras: lists vivid with its formats and what it can serve" \
  bash -c "grep -q 'vivid' '$work/cameras.out' && grep -q 'YUYV' '$work/cameras.out' && grep -qi 'zoom' '$work/cameras.out'"
"$SHUTTER" capture --board "$board" --out "$work/one.jpg" > "$work/capture.out" 2>&1; status=$?
check "capture: one still, exit 0, photo event 1280x720: $(cat "$work/capture.out")" \
  bash -c "[ $status = 0 ] && grep -q '\"width\": 1280, \"height\": 720' '$work/capture.out' && [ -s '$work/one.jpg' ]"
"$SHUTTER" check "$board" > "$work/check.out" 2>&1
check "check: says exposure is disabled on vivid, and why" grep -q "control exposure: disabled" "$work/check.out"
rm -rf "$work"
finish
