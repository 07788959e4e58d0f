#!/usr/bin/env bash
# A Pi rig simulated on any machine: `shutter run --simulate` with the Raspberry Pi 5 board and
# standard input empty plays the demo session on the mock chip and writes its photos through the
# simulated Camera Module 3 (the libcamera backend's fake camera), into ./photos; in a terminal
# (tmux) the simulator's keys drive the board's lines; `check` and `capture` take --simulate too. Runs on the host, no VM; needs libshutter-libcamera.so beside
# the binary (swift build builds it); ~30 s.
#   SHUTTER=.build/debug/shutter Tests/Simulator/test-simulate.sh
set -u
here=$(dirname "$(readlink -f "$0")")
. "$here/../VM/lib.sh"
shutter=$(readlink -f "${SHUTTER:-.build/debug/shutter}")
boards=$(readlink -f "$here/../../Boards")
work=$(mktemp -d)
trap 'tmux -L shutter-simulate kill-server 2> /dev/null; rm -rf "$work"' EXIT

# --- run: the demo session on the Pi 5 board, simulated ---
(cd "$work" && timeout 120 "$shutter" run --simulate --board "$boards/raspberry-pi-5.json" --no-state < /dev/null > run.jsonl 2> run.err); status=$?
check "run: exit 0 (got $status; $(tail -n 1 "$work/run.err"))" [ "$status" = 0 ]
check "run: says what it simulates: $(grep -m1 simulating "$work/run.err")" \
  grep -q "simulating board raspberry-pi-5: its 9 lines on the mock chip, the simulated imx708 (Camera Module 3)" "$work/run.err"
check "run: plays the demo session" grep -q "playing the demo session" "$work/run.err"
check "run: the camera is the simulated imx708 at its full resolution: $(grep -m1 cameraReady "$work/run.jsonl")" \
  grep -q '"cameraReady", .*"card": "imx708", "width": 4608, "height": 2592' "$work/run.jsonl"
photos=$(ls "$work"/photos/IMG_*.jpg 2> /dev/null | wc -l)
events=$(grep -c '"event": "photo"' "$work/run.jsonl")
# The Pi 5 board has no burst: the demo's click and its hold make a photo each.
check "run: the demo's photos are in ./photos ($photos files, $events photo events)" bash -c "[ $photos -ge 2 ] && [ $photos = $events ]"
check "run: no press failed: $(grep -m1 captureFailed "$work/run.jsonl")" bash -c "[ -s '$work/run.jsonl' ] && ! grep -q captureFailed '$work/run.jsonl'"
first=$(ls "$work"/photos/IMG_*.jpg 2> /dev/null | head -n 1)
checker=$(dirname "$shutter")/shutter-capture-check
check "run: the photo is 4608x2592 and shows the colour bars: $("$checker" verify --jpeg "$first" --width 4608 --height 2592 --bars --exif imx708 --exif 'Raspberry Pi')" \
  "$checker" verify --jpeg "$first" --width 4608 --height 2592 --bars --exif imx708 --exif 'Raspberry Pi'

# --- run in a terminal: the simulator's keys drive the Pi board's lines ---
if command -v tmux > /dev/null; then
  mkdir -p "$work/tty"
  tmux -L shutter-simulate new-session -d -s sim -x 200 -y 50 -c "$work/tty" \
    "'$shutter' run --simulate --board '$boards/raspberry-pi-5.json' --no-state 2> '$work/tty.err'; echo exited \$? > '$work/tty.status'; sleep 30"
  screen() { tmux -L shutter-simulate capture-pane -p -t sim; }
  wait_screen() { for _ in $(seq 100); do screen | grep -q "$1" && return 0; sleep 0.1; done; return 1; }
  check "terminal: the keys are listed for board raspberry-pi-5" wait_screen "shutter simulator, board raspberry-pi-5. Keys:"
  tmux -L shutter-simulate send-keys -t sim f
  check "terminal: 'f' takes a 4608x2592 photo: $(sleep 2; screen | grep -m1 PHOTO)" wait_screen "PHOTO  photos/IMG_.*(4608×2592"
  tmux -L shutter-simulate send-keys -t sim q
  for _ in $(seq 50); do [ -f "$work/tty.status" ] && break; sleep 0.1; done
  check "terminal: 'q' quits with exit 0 ($(cat "$work/tty.status" 2> /dev/null))" grep -qx "exited 0" "$work/tty.status"
else
  skip "terminal: no tmux"
fi

# --- run --output and --camera-module ---
(cd "$work" && timeout 120 "$shutter" run --simulate --camera-module imx477 --output "$work/hq" --board "$boards/raspberry-pi-4.json" --no-state < /dev/null > hq.jsonl 2> hq.err); status=$?
check "run --camera-module imx477 --output: exit $status, the HQ camera at 4056x3040" \
  bash -c "[ $status = 0 ] && grep -q '\"card\": \"imx477\", \"width\": 4056, \"height\": 3040' '$work/hq.jsonl'"
check "run --output: the photos are in the directory given ($(ls "$work"/hq/IMG_*.jpg 2> /dev/null | wc -l))" \
  bash -c "ls '$work'/hq/IMG_*.jpg > /dev/null 2>&1"
"$shutter" run --simulate --camera-module imx999 --board "$boards/raspberry-pi-5.json" < /dev/null > /dev/null 2> "$work/bad.err"; status=$?
check "run: an unknown module is refused, named: $(cat "$work/bad.err")" bash -c "[ $status = 1 ] && grep -q \"'imx999'\" '$work/bad.err'"

# --- check and capture ---
"$shutter" check --simulate "$boards/raspberry-pi-5.json" > "$work/check.txt" 2>&1; status=$?
check "check --simulate: exit $status, the mock chip and the simulated module's format" \
  bash -c "[ $status = 0 ] && grep -q 'mock chip' '$work/check.txt' && grep -q 'simulated: imx708 (Camera Module 3)' '$work/check.txt' && grep -q 'camera: .*imx708.* 4608x2592' '$work/check.txt'"
(cd "$work" && timeout 60 "$shutter" capture --simulate --board "$boards/raspberry-pi-zero-2w.json" --out "$work/one.jpg" > capture.jsonl 2> capture.err); status=$?
check "capture --simulate: exit $status, a 1920x1080 photo (the board's size) at --out" \
  bash -c "[ $status = 0 ] && [ -s '$work/one.jpg' ] && grep -q '\"width\": 1920, \"height\": 1080' '$work/capture.jsonl'"
finish
