#!/usr/bin/env bash
# The simulator as a first-time user meets it: `shutter run` with no board and stdin at its
# end plays the demo session; in a terminal (tmux) keys drive the lines, events scroll by in words
# above an overlay (the control's label and value over a scale with ticks, the chooser, a flash line
# for each photo, a status line), and with standard output a pipe the events stay JSON lines there.
# Runs on the host, no VM; ~50 s.
#   SHUTTER=.build/debug/shutter Tests/Simulator/test-simulator.sh
set -u
here=$(dirname "$(readlink -f "$0")")
. "$here/../VM/lib.sh"
shutter=$(readlink -f "${SHUTTER:-.build/debug/shutter}")
work=$(mktemp -d)
trap 'tmux -L shutter-test kill-server 2> /dev/null; rm -rf "$work"' EXIT

# --- demo: no board, no terminal, stdin empty ---
if [ -e /etc/shutter/board.json ]; then
  echo "# /etc/shutter/board.json exists: the demo is run with --board Boards/simulator.json"
  board_args=(--board "$here/../../Boards/simulator.json")
else
  board_args=()
fi
(cd "$work" && timeout 60 "$shutter" run "${board_args[@]}" --no-state < /dev/null > demo.jsonl 2> demo.err); status=$?
check "demo: exit 0 (got $status)" [ "$status" = 0 ]
check "demo: says it plays the demo session: $(grep -m1 demo "$work/demo.err")" grep -q "playing the demo session" "$work/demo.err"
for event in controlsActive '"control": "zoom", "value"' '"controlSelected", "t": [0-9.]*, "control": "exposure"' \
             '"control": "exposure", "value"' '"control": "filter", "index"' '"burst", "t": [0-9.]*, "phase": "ended"'; do
  check "demo: the session shows $event" grep -q "$event" "$work/demo.jsonl"
done
photos=$(ls "$work"/photos/IMG_*.jpg 2> /dev/null | wc -l)
check "demo: a photo and a burst are on disk in the board's output directory ($photos photos)" [ "$photos" -ge 4 ]

# --- demo: the same every time, and the user's saved values untouched ---
# Twice with the state kept (no --no-state), in a state directory of its own: the second run
# starts where the first did, and nothing is saved.
mkdir -p "$work/state" "$work/again"
for run in 1 2; do
  (cd "$work/again" && env -u STATE_DIRECTORY XDG_STATE_HOME="$work/state" timeout 60 "$shutter" run "${board_args[@]}" < /dev/null \
     > "demo-$run.jsonl" 2> "demo-$run.err")
done
first_zoom() { grep -m1 '"control": "zoom", "value"' "$1" | sed 's/"t": [0-9.]*, //'; }
check "demo: a second demo starts from the same values: $(first_zoom "$work/again/demo-2.jsonl")" \
  bash -c "[ -n \"$(first_zoom "$work/again/demo-1.jsonl")\" ] && [ \"$(first_zoom "$work/again/demo-1.jsonl")\" = \"$(first_zoom "$work/again/demo-2.jsonl")\" ]"
check "demo: saves no control values ($(find "$work/state" -name '*.controls.json' | wc -l) state files)" \
  bash -c "[ -z \"\$(find '$work/state' -name '*.controls.json')\" ]"

# --- the demo with a socket asked for: played, then served on until SIGTERM ---
mkdir -p "$work/served"
(cd "$work/served" && exec "$shutter" run "${board_args[@]}" --no-state --socket "$work/served/api.sock" < /dev/null > demo.jsonl 2> demo.err) &
served=$!
for _ in $(seq 300); do grep -q '"event": "burst", .*"phase": "ended"' "$work/served/demo.jsonl" 2> /dev/null && break; sleep 0.1; done
sleep 2
check "demo with --socket: after the session the daemon still answers" "$shutter" status --socket "$work/served/api.sock"
kill -TERM $served 2> /dev/null
( sleep 15; kill -KILL $served 2> /dev/null ) &
guard=$!
wait $served; status=$?
kill $guard 2> /dev/null
check "demo with --socket: SIGTERM ends it, exit 0 (got $status)" [ "$status" = 0 ]

# --- a pipe that stays open is still read as a trace ---
(cd "$work" && { printf '{"t": 0.1, "line": "half", "active": true}\n{"t": 0.25, "line": "half", "active": false}\n'; sleep 1.5; } \
  | timeout 30 "$shutter" run --board "$here/../../Boards/simulator.json" --no-state > trace.jsonl 2> trace.err); status=$?
check "an open pipe is a trace, not the demo: exit $status, a light press, no demo" \
  bash -c "[ $status = 0 ] && grep -q lightPress '$work/trace.jsonl' && [ -e '$work/trace.err' ] && ! grep -q demo '$work/trace.err' && ! grep -q burst '$work/trace.jsonl'"

# --- terminal: keys under tmux ---
tmux -L shutter-test new-session -d -s sim -x 100 -y 50 -c "$work" "'$shutter' run --board '$here/../../Boards/simulator.json' --no-state 2> '$work/tty.err'; echo exited \$? > '$work/tty.status'; sleep 30"
screen() { tmux -L shutter-test capture-pane -p -t sim; }
status_line() { screen | grep -E '│ photos' | tail -n 1; }
wait_screen() { for _ in $(seq 50); do screen | grep -q "$1" && return 0; sleep 0.1; done; return 1; }
check "terminal: the keys are listed on screen" wait_screen "f / enter: full click"
check "terminal: the status line shows the controls hidden at first: $(status_line)" wait_screen "controls hidden"
tmux -L shutter-test send-keys -t sim l
check "terminal: 'l' (light press) shows the current control and its value: $(status_line)" wait_screen "● Zoom 1.0×"
check "terminal: the light press is told in words above the overlay" wait_screen "s  light press (half)"
check "terminal: the overlay draws the control's label and value over a scale with ticks and the centre mark" \
  bash -c "tmux -L shutter-test capture-pane -p -t sim | grep -A2 -E '^ +Zoom  1\.0×\$' | grep -qE '\\|·+\\|' &&
           tmux -L shutter-test capture-pane -p -t sim | grep -qE '^ +▲\$'"
tmux -L shutter-test send-keys -t sim Right
check "terminal: → steps the zoom up, by one fine step: $(sleep 1; status_line)" wait_screen "● Zoom 1\.[1-2]×"
tmux -L shutter-test send-keys -t sim d
check "terminal: 'd' (double light press) opens the chooser: $(sleep 1; status_line)" wait_screen "chooser: \[Zoom\] Exposure Filter"
tmux -L shutter-test send-keys -t sim Right
check "terminal: → in the chooser highlights the next control, not the one after: $(sleep 1; status_line)" wait_screen "chooser: Zoom \[Exposure\] Filter"
tmux -L shutter-test send-keys -t sim ,
check "terminal: , in the chooser goes back one: $(sleep 1; status_line)" wait_screen "chooser: \[Zoom\] Exposure Filter"
tmux -L shutter-test send-keys -t sim f
check "terminal: 'f' takes a photo and the status line names it: $(sleep 1.5; status_line)" wait_screen "photos: 1, last photos/IMG_"
check "terminal: the photo is a flash line naming its file" wait_screen "◉ PHOTO  photos/IMG_"
# capture-pane -J joins the lines the terminal wrapped itself: as many lines either way means
# every line was broken at a space by shutter, none mid-word by the terminal.
check "terminal: at 100 columns the terminal wraps no line (the keys, the camera, the photo)" \
  bash -c 'rows=$(tmux -L shutter-test capture-pane -p -t sim | wc -l) && [ "$rows" -gt 0 ] &&
           [ "$(tmux -L shutter-test capture-pane -p -J -t sim | wc -l)" = "$rows" ]'
# The pane is read first: a capture that failed must fail the check, not pass the negated grep.
check "terminal: no JSON event line reaches the screen" \
  bash -c 'pane=$(tmux -L shutter-test capture-pane -p -S - -t sim) && grep -q "◉ PHOTO" <<< "$pane" && ! grep -q "{\"event\"" <<< "$pane"'
tmux -L shutter-test send-keys -t sim q
for _ in $(seq 50); do [ -f "$work/tty.status" ] && break; sleep 0.1; done
check "terminal: 'q' quits with exit 0 ($(cat "$work/tty.status" 2> /dev/null))" grep -qx "exited 0" "$work/tty.status"

# --- keys in a terminal, standard output a pipe: the events stay JSON lines there ---
tmux -L shutter-test new-session -d -s pipe -x 200 -y 50 -c "$work" "'$shutter' run --board '$here/../../Boards/simulator.json' --no-state > '$work/piped.jsonl' 2> '$work/piped.err'; echo exited \$? > '$work/piped.status'; sleep 30"
for _ in $(seq 50); do grep -q "Keys:" "$work/piped.err" 2> /dev/null && break; sleep 0.1; done
tmux -L shutter-test send-keys -t pipe l
for _ in $(seq 50); do grep -q lightPress "$work/piped.jsonl" 2> /dev/null && break; sleep 0.1; done
tmux -L shutter-test send-keys -t pipe q
for _ in $(seq 50); do [ -f "$work/piped.status" ] && break; sleep 0.1; done
check "pipe: a key's light press is a JSON line on standard output" grep -q '^{"event": "lightPress"' "$work/piped.jsonl"
check "pipe: standard output has JSON lines only (no overlay, no key list)" bash -c "[ -s '$work/piped.jsonl' ] && ! grep -v '^{\"event\"' '$work/piped.jsonl' | grep -q ."
check "pipe: the key list went to standard error" grep -q "Keys: l / space" "$work/piped.err"
check "pipe: 'q' quits with exit 0 ($(cat "$work/piped.status" 2> /dev/null))" grep -qx "exited 0" "$work/piped.status"
finish
