#!/usr/bin/env bash
# The daemon as a service on gpio-sim + vivid: presses reach an API subscriber as events and
# JPEG files; status/ctl answer; SIGHUP with a broken board keeps it running, and `shutter reload` fails on it; SIGTERM during a
# burst leaves only complete photos; kill -9 while writing leaves no partial photo visible and
# the next start removes the temporary files; a notify socket receives READY=1 and WATCHDOG=1.
# Not GPIO-version specific: run once per CI (skipped in the libgpiod 2.x run).
set -u
here=$(dirname "$(readlink -f "$0")")
. "$here/lib.sh"
: "${SHUTTER:?set SHUTTER to the shutter binary}"
work=$(mktemp -d)
for line in half full secondary pad0 pad1 pad2 pad3 pad4 pad5; do drive $line down; done
sed -e "s|\"directory\": \"photos\"|\"directory\": \"$work/photos\"|" -e "s|\"tapMaxMs\": 180}|\"tapMaxMs\": 180, \"burst\": true, \"burstIntervalMs\": 200}|" Boards/gpio-sim.json > "$work/board.json"
cp "$work/board.json" "$work/board.good"
sock=$work/api.sock

# until COMMAND succeeds, at most ~90 s (the first start under TCG loads the Swift runtime over 9p)
wait_until() { for _ in $(seq 900); do "$@" && return 0; sleep 0.1; done; return 1; }
# wait_seconds N COMMAND...: wait_until, for at most N seconds of the clock (each try of a
# command costs a TCG guest about 0.3 s, so 900 tries can take minutes).
wait_seconds() { local end=$((SECONDS + $1)); shift; while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.1; done; return 1; }
complete_jpegs() {   # complete_jpegs MIN: at least MIN photos are visible and each is whole (FFD8 ... FFD9)
  local f n=0
  for f in "$work"/photos/IMG_*.jpg; do
    [ -e "$f" ] || continue
    n=$((n + 1))
    [ "$(head -c 2 "$f" | od -An -tx1 | tr -d ' ')" = ffd8 ] && [ "$(tail -c 2 "$f" | od -An -tx1 | tr -d ' ')" = ffd9 ] ||
      { echo "# partial: $f ($(stat -c %s "$f") bytes)"; return 1; }
  done
  [ "$n" -ge "$1" ] || { echo "# $n photos visible, expected at least $1"; return 1; }
}
temp_files() { ls -A "$work/photos" 2>/dev/null | grep -c '^\.shutter-tmp-'; }

# A notify listener, as systemd's: datagrams appended to a file.
socat -u UNIX-RECV:"$work/notify.sock" OPEN:"$work/notify.out",creat,append &
listener=$!
wait_until test -S "$work/notify.sock"
start=$(date +%s%N)
NOTIFY_SOCKET=$work/notify.sock WATCHDOG_USEC=600000 \
  "$SHUTTER" run --board "$work/board.json" --state "$work/state.json" --socket "$sock" > "$work/events" 2> "$work/run.err" &
daemon=$!
wait_until grep -q READY=1 "$work/notify.out"
ready=$(( ($(date +%s%N) - start) / 1000000 ))
check "notify: READY=1 with a STATUS line (after $ready ms)" grep -q 'STATUS=board gpio-sim' "$work/notify.out"
check "api: the socket is mode 0660" [ "$(stat -c %a "$sock")" = 660 ]
"$SHUTTER" events --socket "$sock" > "$work/subscriber" 2> "$work/subscriber.err" &
follower=$!
# Press only once the follower is subscribed: under TCG its start (the Swift runtime over 9p)
# can take longer than any fixed sleep, and a press before then is not its to see.
wait_until bash -c "'$SHUTTER' status --socket '$sock' | grep -q 'subscribed [1-9]'"

# A full click through the kernel's lines.
drive half up; sleep 0.05; drive full up; sleep 0.15; drive full down; sleep 0.05; drive half down
wait_until grep -q '"event": "photo"' "$work/subscriber"
check "api: the subscriber got the press as capture events" grep -q '"event": "capture", .*"action": "primary"' "$work/subscriber"
photo=$(grep -m1 '"event": "photo"' "$work/subscriber" | sed -n 's/.*"path": "\([^"]*\)".*/\1/p')
check "api: the subscriber got the photo event, and the file is a whole JPEG: $photo" \
  bash -c "[ -n '$photo' ] && [ \"\$(tail -c 2 '$photo' | od -An -tx1 | tr -d ' ')\" = ffd9 ]"
check "api: subscriber lines are exactly standard output's" \
  bash -c "grep -F -x -q \"\$(grep -m1 '\"event\": \"photo\"' '$work/subscriber')\" '$work/events'"
# The loop polls the streaming camera through an epoll instance watching the device alone: a
# V4L2 driver's poll takes its queue's lock, which vivid holds while it fills a frame, and a loop
# woken by an edge polled the device again before it read the edge (Docs/Performance.md).
video_fd=$(for fd in /proc/$daemon/fd/*; do [[ $(readlink "$fd") == /dev/video* ]] && basename "$fd"; done | head -n 1)
check "camera: the loop polls the video device (descriptor ${video_fd:-none}) through an epoll instance" \
  bash -c "[ -n '$video_fd' ] && grep -q -E '^tfd: +$video_fd events: +[0-9a-f]+ ' /proc/$daemon/fdinfo/*"
"$SHUTTER" status --socket "$sock" > "$work/status" 2>&1
check "api: status counts the photo ($(tr '\n' ' ' < "$work/status"))" grep -q 'photos [1-9]' "$work/status"
check "api: ctl set zoom 2 is applied" "$SHUTTER" ctl --socket "$sock" set zoom 2
check "api: ctl set zoom 99 is refused" bash -c "! '$SHUTTER' ctl --socket '$sock' set zoom 99 2>/dev/null"
# --wait ends once the photo is on disk and prints its path: the photo event naming this request.
"$SHUTTER" ctl --socket "$sock" --wait capture > "$work/waited" 2>&1; status=$?
wait_until bash -c "[ \$(grep -c '\"event\": \"photo\"' '$work/subscriber') -ge 2 ]"
check "api: a remote capture makes a photo" grep -q '"action": "remote"' "$work/subscriber"
waited=$(cat "$work/waited")
check "api: ctl --wait capture exits 0 with the path of a whole JPEG, its photo event's: $waited" \
  bash -c "[ $status = 0 ] && [ \"\$(tail -c 2 '$waited' | od -An -tx1 | tr -d ' ')\" = ffd9 ] &&
           grep '\"event\": \"photo\"' '$work/subscriber' | grep -F '\"path\": \"$waited\"' | grep -q '\"request\": \"ctl-'"

# SIGHUP with a broken board: refused, logged, still running and answering.
echo '{ "name": "broken",' > "$work/board.json"
kill -HUP $daemon; sleep 1
check "reload: a broken board is refused with its error logged" grep -q 'SIGHUP: .*keeping the running board gpio-sim' "$work/run.err"
check "reload: the daemon still runs and answers" bash -c "kill -0 $daemon && '$SHUTTER' status --socket '$sock' > /dev/null"
cp "$work/board.good" "$work/board.json"
kill -HUP $daemon; sleep 1
check "reload: the good board applies again" grep -q 'SIGHUP: reloaded' "$work/run.err"
# shutter reload (the unit's ExecReload) says what came of it: exit 1 with the error, 0 with the board.
echo '{ "name": "broken",' > "$work/board.json"
"$SHUTTER" reload --socket "$sock" > "$work/reload.out" 2>&1; status=$?
check "shutter reload of a broken board exits 1 with the board's error: $(head -c 160 "$work/reload.out")" \
  bash -c "[ $status = 1 ] && grep -q 'keeping the running board gpio-sim' '$work/reload.out'"
cp "$work/board.good" "$work/board.json"
"$SHUTTER" reload --socket "$sock" > "$work/reload.out" 2>&1; status=$?
check "shutter reload of the good board exits 0: $(cat "$work/reload.out")" bash -c "[ $status = 0 ] && grep -q '^reloaded .*(board gpio-sim)' '$work/reload.out'"

# SIGHUP with a new camera size: the old camera closes, the new one opens off the loop (the
# daemon answers meanwhile), and the next photo has the new size; then back to the good board.
# The new camera's open is held for 6 s (strace delays the daemon's openat of /dev/video0, as a
# slow USB camera's open would be), so a status answered during it provably came while the
# camera was being replaced: it says the camera is opening; once the open is let go, ready.
camera_node=$(grep -l '^vivid' /sys/class/video4linux/video*/name | head -1 | xargs dirname | xargs basename)
strace -f -qq -o /dev/null -p $daemon -P "/dev/$camera_node" -e trace=openat,open -e inject=openat,open:delay_enter=6s 2> /dev/null &
tracer=$!
wait_until grep -q 'TracerPid:[[:space:]]*[1-9]' /proc/$daemon/status
sed -e 's|"width": 1280, "height": 720|"width": 640, "height": 480|' "$work/board.good" > "$work/board.json"
hup_at=$(date +%s%N)
kill -HUP $daemon
# Statuses until one says opening (4 s at most, inside the held 6 s): each must be answered.
answered=0 opening=""
for _ in $(seq 40); do
  "$SHUTTER" status --socket "$sock" > "$work/status.reload" 2>&1 || break
  answered=$((answered + 1))
  grep -q '^camera .*: opening' "$work/status.reload" && { opening=$(( ($(date +%s%N) - hup_at) / 1000000 )); break; }
  sleep 0.1
done
seen=${opening:+$opening ms after the HUP, inside the 6 s the open was held}
check "reload: the daemon answers while the camera is replaced (answered $answered times; 'opening' ${seen:-never}: $(grep '^camera' "$work/status.reload"))" \
  bash -c "[ -n '$opening' ] && [ '$opening' -lt 6000 ] && ! grep -q '\"event\": \"cameraReady\", .*\"width\": 640' '$work/subscriber'"
check "reload: the new camera reports ready at 640x480" \
  wait_until grep -q '"event": "cameraReady", .*"width": 640, "height": 480' "$work/subscriber"
kill $tracer 2>/dev/null; wait $tracer 2>/dev/null
"$SHUTTER" status --socket "$sock" > "$work/status.reload" 2>&1
check "reload: once open, status says the camera is streaming: $(grep '^camera' "$work/status.reload")" grep -q '^camera .*: streaming' "$work/status.reload"
"$SHUTTER" ctl --socket "$sock" capture > /dev/null
wait_until bash -c "[ \$(grep -c '\"event\": \"photo\"' '$work/subscriber') -ge 3 ]"
check "reload: the next photo is 640x480" \
  bash -c "grep '\"event\": \"photo\"' '$work/subscriber' | tail -n 1 | grep -q '\"width\": 640, \"height\": 480'"
cp "$work/board.good" "$work/board.json"
kill -HUP $daemon
check "reload: back on the good board, the camera is ready at 1280x720 again" \
  wait_until bash -c "grep '\"event\": \"cameraReady\"' '$work/subscriber' | tail -n 1 | grep -q '\"width\": 1280'"

# SIGTERM in the middle of a burst: only complete photos.
drive half up; sleep 0.05; drive full up; sleep 1.6
kill -TERM $daemon; wait $daemon; status=$?
drive full down; drive half down
check "burst: exit 0 on SIGTERM mid-burst (status $status)" [ "$status" = 0 ]
check "burst: the burst was under way ($(grep -c '"event": "burst"' "$work/events") burst events, $(ls "$work"/photos/IMG_*.jpg | wc -l) photos)" \
  bash -c "[ \$(grep -c '\"event\": \"burst\"' '$work/events') -ge 2 ]"
check "burst: every photo is complete" complete_jpegs 4
check "burst: no temporary files left" [ "$(temp_files)" = 0 ]
check "notify: WATCHDOG=1 came from the loop" grep -q WATCHDOG=1 "$work/notify.out"
check "notify: STOPPING=1 on shutdown" grep -q STOPPING=1 "$work/notify.out"
check "api: the socket file is removed on exit" [ ! -e "$sock" ]
kill $follower 2>/dev/null; wait $follower 2>/dev/null

# kill -9 while photos are being written: nothing partial is visible; the next start cleans up.
# The kill must land while a photo is being written, which on tmpfs lasts well under a
# millisecond. So once the burst has saved a photo, strace holds each of the daemon's fsyncs
# for 2 s (a slow card's, stretched): a photo being written then sits as a temporary file,
# written but not yet linked, and the kill comes once one is seen. Whether a temporary file
# was there at the kill is counted after it; a try that missed (the file linked between the
# look and the kill) starts the daemon again, at most 3 tries.
photos_before=$(ls "$work"/photos/IMG_*.jpg 2>/dev/null | wc -l)
caught=0 tries=0
while [ $caught = 0 ] && [ $tries -lt 3 ]; do
  tries=$((tries + 1))
  rm -f "$sock"
  "$SHUTTER" run --board "$work/board.json" --no-state --socket "$sock" > "$work/events2" 2> "$work/run2.err" &
  daemon=$!
  wait_until test -S "$sock"
  drive half up; sleep 0.05; drive full up
  wait_until bash -c "grep -q '\"event\": \"photo\"' '$work/events2'"
  strace -f -qq -o /dev/null -p $daemon -e trace=fsync,fdatasync -e inject=fsync,fdatasync:delay_enter=2s 2> /dev/null &
  tracer=$!
  # (a fsync held 2 s keeps each photo's temporary file there for as long: 20 s is ample)
  wait_seconds 20 bash -c "ls -A '$work/photos' | grep -q '^\.shutter-tmp-'"
  kill -9 $daemon; wait $daemon 2>/dev/null
  left=$(temp_files)
  wait $tracer 2>/dev/null
  drive full down; drive half down
  [ "$left" -ge 1 ] && caught=1
  echo "# kill -9 try $tries: $left temporary files at the kill, $(grep -c '"event": "photo"' "$work/events2") photos saved before it"
done
check "kill -9: it landed while a photo was being written ($left temporary files at the kill, try $tries of at most 3)" [ "$caught" = 1 ]
check "kill -9: no partial photo visible ($(ls "$work"/photos/IMG_*.jpg 2>/dev/null | wc -l) photos, $photos_before before these runs)" \
  complete_jpegs $((photos_before + 1))
"$SHUTTER" run --board "$work/board.json" --no-state --socket "$sock" > /dev/null 2> "$work/run3.err" &
daemon=$!
check "kill -9: the socket left behind is replaced on the next start (it answers)" \
  wait_until bash -c "'$SHUTTER' status --socket '$sock' > /dev/null"
check "kill -9: the next start removed the temporary files ($left before)" bash -c "[ $left -ge 1 ] && [ \$(ls -A '$work/photos' | grep -c '^\.shutter-tmp-') = 0 ]"
kill -TERM $daemon; wait $daemon
kill $listener 2>/dev/null; wait $listener 2>/dev/null
echo "# notify: $(tr '\n' '|' < "$work/notify.out" | head -c 300)"
echo "# run.err:"; sed 's/^/#   /' "$work/run.err" | tail -n 20
finish
