#!/bin/bash
# Tests/VM/test-libcamera.sh - cameras through libcamera on a real kernel: the virtual media
# pipeline vimc, which libcamera's vimc pipeline handler drives like a camera module's.
#
# Run inside the VM guest as root with vimc loaded and udevd running (VM_VIMC=1), e.g.
#   VM_VIMC=1 Deploy/vm/run-in-vm.sh -- env SHUTTER=$PWD/.build/debug/shutter bash Tests/VM/test-libcamera.sh
# Env: SHUTTER = the built shutter binary; shutter-capture-check is taken from beside it (or
# $SHUTTER_CAPTURE_CHECK). Checks:
#   - the V4L2 backend under libcamerify: it goes through libcamera's compatibility layer (driver
#     'libcamera', card 'platform/vimc.0 Sensor B', a name the raw nodes do not answer to) and
#     its JPEG decodes at the board's size with vimc's colour bars
#   - a format the camera lacks is converted by libv4lconvert, whose ioctls reach the layer too
#     (under libcamerify vimc offers RGB3/BGR3 only; YU12 is converted from them)
#   - the native libcamera backend: `shutter cameras` lists the camera through libcamera;
#     `shutter capture` writes a JPEG at the board's size with the bars; the daemon turns
#     gpio-sim presses into photos whose frame lies within one frame interval of the press
#     (distribution printed); digital zoom changes the field of view, not the size; another
#     device the process holds (vivid) going away leaves the camera alone; vimc unbound and
#     bound again (UNBIND_CYCLES times, default 2) gives captureFailed, a reopen and photos
#     again, no partial file, and leaves no removed node or dmabuf held (figures printed)
#   - figures: press -> JPEG (both backends) next to `cam` (libcamera's own tool) in this boot
# Prints one "ok - ..." / "not ok - ..." line per check and "# ..." figures; exits 1 if any failed.
set -u
. "$(dirname "$0")/lib.sh"   # ok, not_ok, drive, wait_for_consumer (gpio-sim lines)
SHUTTER=${SHUTTER:-.build/debug/shutter}
CHECK=${SHUTTER_CAPTURE_CHECK:-$(dirname "$SHUTTER")/shutter-capture-check}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CAMERA="platform/vimc.0 Sensor B"
# libcamera's vimc pipeline makes both sides multiples of 6 (640x480 comes back as 636x480).
WIDTH=720 HEIGHT=480
WORK=$(mktemp -d /tmp/libcamera-vm.XXXXXX)
cd "$WORK" || exit 1
failed=0
passed=0

# board FILE CAMERA-JSON: Boards/gpio-sim.json with another camera object.
board() {
  sed "s|\"camera\": {.*}|\"camera\": $2|" "$ROOT/Boards/gpio-sim.json" > "$1"
  grep -qF "$2" "$1" || { echo "# could not write $1"; return 1; }
}
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
# stats: numbers in, "n=.. min=.. p50=.. p90=.. max=.. ms" out.
stats() { sort -n | awk '{a[NR]=$1} END{if(NR==0){print "n=0"; exit}; i=int(NR*0.9+0.5); if(i<1)i=1; if(i>NR)i=NR; printf "n=%d min=%d p50=%d p90=%d max=%d ms\n", NR, a[1], a[int((NR+1)/2)], a[i], a[NR]}'; }

[ -x "$CHECK" ] || { echo "not ok - shutter-capture-check not found at $CHECK"; exit 1; }
media=$(grep -lx "VIMC MDEV" /sys/bus/media/devices/media*/model 2>/dev/null | head -1 | xargs -r dirname | xargs -r basename)
[ -n "$media" ] || { echo "not ok - vimc is not loaded (run the guest with VM_VIMC=1)"; exit 1; }
cam --list > cam-list.txt 2>&1
check "libcamera lists vimc's camera '$CAMERA' (udev initialised its devices)" grep -qF "($CAMERA)" cam-list.txt || {
  echo "# test-libcamera.sh: libcamera sees no camera; nothing else can run"; exit 1; }

# 1. The V4L2 backend under libcamerify ------------------------------------------------------------
"$SHUTTER" cameras > cameras-raw.txt 2>&1
libcamerify "$SHUTTER" cameras > cameras-compat.txt 2>&1
check "without libcamerify, shutter cameras shows vimc's raw nodes (driver vimc)" \
  grep -q '^/dev/video[0-9]*: vimc (driver vimc' cameras-raw.txt
check "under libcamerify, shutter cameras shows the camera through libcamera (driver libcamera, card '$CAMERA')" \
  grep -qF ": $CAMERA (driver libcamera" cameras-compat.txt

board v4l2.json "{\"device\": \"$CAMERA\", \"backend\": \"v4l2\", \"width\": $WIDTH, \"height\": $HEIGHT, \"quality\": 90}"
"$SHUTTER" capture --board v4l2.json --out "$WORK/raw.jpg" > raw.json 2>&1
check "without libcamerify the card name '$CAMERA' is unknown (no camera): only the layer answers to it" \
  bash -c "grep -qF \"no camera '$CAMERA'\" raw.json && ! [ -e '$WORK/raw.jpg' ]"
libcamerify "$SHUTTER" capture --board v4l2.json --out "$WORK/compat.jpg" > compat.json 2>&1
check "under libcamerify, shutter capture (V4L2 backend) prints a ${WIDTH}x${HEIGHT} photo event" \
  grep -q "\"event\": \"photo\".*\"width\": $WIDTH, \"height\": $HEIGHT" compat.json
check "the JPEG decodes to ${WIDTH}x${HEIGHT} and shows vimc's colour bars" \
  "$CHECK" verify --jpeg "$WORK/compat.jpg" --width $WIDTH --height $HEIGHT --bars

# 2. Conversion by libv4lconvert, its ioctls through the C library (so through the layer too) -----
libcamerify "$CHECK" capture --board v4l2.json --format YU12 --out "$WORK/converted.jpg" > converted.json 2>&1
check "a format the camera lacks (YU12) is converted by libv4lconvert from the layer's RGB and decodes with the bars" \
  bash -c "grep -q '\"event\": \"photo\"' converted.json && '$CHECK' verify --jpeg '$WORK/converted.jpg' --width $WIDTH --height $HEIGHT --bars" ||
  grep -v 'INFO\|WARN' converted.json | sed 's/^/#   /' | head -5

# 3. The native libcamera backend ----------------------------------------------------------------------
board libcamera.json "{\"device\": \"$CAMERA\", \"backend\": \"libcamera\", \"width\": $WIDTH, \"height\": $HEIGHT, \"quality\": 90}"
sed -i "s|\"directory\": \"photos\"|\"directory\": \"$WORK/photos\"|" libcamera.json
check "shutter cameras lists the vimc camera through libcamera" grep -qF "libcamera: $CAMERA" cameras-raw.txt
"$SHUTTER" capture --board libcamera.json --out "$WORK/native.jpg" > native.json 2>&1
check "shutter capture (libcamera backend) prints a ${WIDTH}x${HEIGHT} photo event" \
  grep -q "\"event\": \"photo\".*\"width\": $WIDTH, \"height\": $HEIGHT" native.json || sed 's/^/#   /' native.json | head -5
check "its JPEG decodes to ${WIDTH}x${HEIGHT} and shows vimc's colour bars" \
  "$CHECK" verify --jpeg "$WORK/native.jpg" --width $WIDTH --height $HEIGHT --bars

# The board's fps goes to FrameDurationLimits, which vimc lacks: refused, naming the control.
board fps.json "{\"device\": \"$CAMERA\", \"backend\": \"libcamera\", \"width\": $WIDTH, \"height\": $HEIGHT, \"fps\": 15}"
"$SHUTTER" capture --board fps.json --out "$WORK/fps.jpg" > fps.out 2>&1; fps_status=$?
check "a board fps on a camera without FrameDurationLimits (vimc) is refused with the reason, no photo (exit $fps_status)" \
  bash -c "[ $fps_status != 0 ] && grep -q FrameDurationLimits fps.out && ! [ -e '$WORK/fps.jpg' ]" || sed 's/^/#   /' fps.out | head -3
# A viewfinder stream: vimc has one stream, so none is granted; the still stream works as before.
board vf.json "{\"device\": \"$CAMERA\", \"backend\": \"libcamera\", \"width\": $WIDTH, \"height\": $HEIGHT, \"viewfinder\": {\"width\": 360, \"height\": 240}}"
"$SHUTTER" check vf.json > vf-check.txt 2>&1
"$SHUTTER" capture --board vf.json --out "$WORK/vf.jpg" > vf.out 2>&1
check "with a viewfinder asked, shutter check says vimc grants none and the still photo is taken at ${WIDTH}x${HEIGHT}" \
  bash -c "grep -q '^ *viewfinder: none' vf-check.txt && '$CHECK' verify --jpeg '$WORK/vf.jpg' --width $WIDTH --height $HEIGHT" || sed 's/^/#   /' vf-check.txt | head -5

# Zero shutter lag with presses at known instants: the frame nearest each press, within its frame interval.
# Presses 1.5 s apart, slower than the stream: no frame is saved twice, so presses closer than the
# frames (libcamera 0.4's vimc streams at 1-1.5 fps under emulation) each took the next frame
# after the one before had been taken, and the offsets grew press by press (830 ms at the 7th).
"$CHECK" run --board libcamera.json --dir "$WORK/zsl" --seconds 120 --press-every-ms 1500 --one-at-a-time --stop-file "$WORK/zsl.stop" > zsl.log 2>&1 &
runner=$!
for _ in $(seq 1200); do [ "$(grep -c '"event": "photo"' zsl.log)" -ge 6 ] && break; sleep 0.1; done
touch "$WORK/zsl.stop"; wait $runner
summary=$(grep '"event": "summary"' zsl.log)
echo "# zsl (libcamera, ${WIDTH}x${HEIGHT}): $summary"
presses=$(echo "$summary" | sed -n 's/.*"presses": \([0-9]*\).*/\1/p'); photos=$(echo "$summary" | sed -n 's/.*"photos": \([0-9]*\).*/\1/p')
check "every press makes a photo ($photos of $presses)" test "${presses:-0}" -ge 6 -a "${photos:-x}" = "${presses:-y}" ||
  grep '"event": "captureFailed"' zsl.log | head -3 | sed 's/^/#   /'
# Every photo is held to the frames around its press (bracketMs) as isFrameAtPress holds it: the
# frame before the press, the one after only where frames were lost around it and it was the
# nearer. The bracket is the service's, or for a photo saved before the frame after its press
# arrived, the one the tool measured from the frames it saw, or failing that the photo is held to
# the frame interval the service assumed (heldToAssumedInterval: the frame exposing at the press).
# A photo with none (withoutBracket) fails: with no bound "outsideBracket: 0" would hold for any
# frame choice.
bracketed=$(echo "$summary" | sed -n 's/.*"bracketMs": {"n": \([0-9]*\).*/\1/p')
assumed=$(echo "$summary" | sed -n 's/.*"heldToAssumedInterval": \([0-9]*\).*/\1/p')
check "every photo's frame is the one exposing at its press ($bracketed of $photos photos bracketed, $(echo "$summary" | sed -n 's/.*"bracketsMeasuredByLoop": \([0-9]*\).*/\1/p') by the tool; $assumed held to the interval assumed)" \
  bash -c "grep -q '\"outsideBracket\": 0,' <<< '$summary' && grep -q '\"withoutBracket\": 0,' <<< '$summary' && [ '${photos:-0}' -ge 6 ] && [ \$(( ${bracketed:-0} + ${assumed:-0} )) = '${photos:-x}' ]" ||
  grep -E '"event": "(photo|press|frame[A-Za-z]*)"' zsl.log | cut -c1-400 | sed 's/^/#   /'

# The daemon: presses pulled on gpio-sim (edges >= 50 ms apart) become photos.
# vimc makes each frame in a kernel thread (vimc-streamer: test pattern, debayer, scaler), which
# with libcamera 0.4 keeps one emulated CPU in the kernel for ~0.7 s a frame whatever the size
# asked (measured in this guest: 1-1.5 fps at 288x192 and at 720x480, the thread at 80-92 % of a
# CPU). Debian's kernel preempts only voluntarily, so gpio-sim's edge interrupt, raised on the CPU
# that wrote the pull, waited behind a frame there: gpiolib then read the line's level late and
# reported the same edge twice (the daemon's edgesLost, its presses cancelled). The streamer is
# kept on CPU 1, and this shell (its pulls), the daemon and gpiolib's edge threads (irq/N-shutter,
# the daemon's lines) on CPU 0, as on a rig, where no camera driver computes frames on the CPU:
# measured, every click lost an edge with the streamer alone moved, none in three runs with the
# edge threads moved too. Nothing the daemon does is changed.
pin_vimc_streamer() {
  local thread
  for thread in $(pgrep '^vimc-stream'); do taskset -pc 1 "$thread" > /dev/null 2>&1; done
  for thread in $(pgrep '^irq/.*-shutter'); do taskset -pc 0 "$thread" > /dev/null 2>&1; done
}
cpus=$(nproc)
[ "$cpus" -ge 2 ] && taskset -pc 0 $$ > /dev/null
for line in half full secondary pad0 pad1 pad2 pad3 pad4 pad5; do drive $line down; done
"$SHUTTER" run --board libcamera.json --state "$WORK/state.json" > events.log 2> daemon.err &
daemon=$!
wait_for_consumer full shutter || echo "# the daemon did not request the lines"
for _ in $(seq 100); do grep -q '"event": "cameraReady"' events.log && break; sleep 0.1; done
sleep 1   # the ring fills
clicks=8
for _ in $(seq $clicks); do
  # (again before each click: a stream restarted after a stall has a new streamer thread)
  [ "$cpus" -ge 2 ] && pin_vimc_streamer
  # Edges 100 ms apart, twice the 50 ms the VM notes ask for: libcamera 0.4's vimc keeps the
  # emulated CPU busy, the kernel reads a line's level late, and 60 ms apart it reported two
  # rising edges in a row (the daemon's edgesLost, its presses cancelled).
  drive half up; sleep 0.1; drive full up; sleep 0.12; drive full down; sleep 0.1; drive half down; sleep 0.6
done
# Up to 30 s for the photos: under emulation libcamera 0.4's vimc streams at about 1 fps, and a
# burst never saves one frame twice, so presses closer than that wait for frames of their own.
for _ in $(seq 300); do [ "$(grep -c '"event": "photo"' events.log)" -ge $clicks ] && break; sleep 0.1; done
kill -TERM $daemon; wait $daemon; status=$?
# Each photo against the frame interval at its own press (bracketMs: the frames on either side of
# it, in this run). Under emulation vimc's intervals wander (50-870 ms measured across boots), so
# a bound taken from another run, earlier in the boot, failed about one run in four.
photo_bounds events.log > zsl-daemon.txt
cut -d' ' -f1 zsl-daemon.txt > offsets.txt
echo "# daemon zsl per photo (offset ms, frame interval at the press ms, interval the service assumed ms): $(tr ' \n' '/,' < zsl-daemon.txt)"
stats_decimal() { sort -n | awk '{a[NR]=$1} END{if(NR) printf "n=%d min=%s p50=%s max=%s ms\n", NR, a[1], a[int((NR+1)/2)], a[NR]; else print "n=0"}'; }
echo "# daemon zsl offset distribution (frame - press): $(stats_decimal < offsets.txt)"
echo "# daemon zsl |offset| / interval at the press: $(awk '$2 != "none" && $2 > 0 { r = ($1 < 0 ? -$1 : $1) / $2; printf "%.2f\n", r }' zsl-daemon.txt | sort -n | tr '\n' ' ')"
check "the daemon (libcamera backend) turns $clicks pulled presses into $clicks photos and exits 0 on SIGTERM (status $status)" \
  bash -c "[ $status = 0 ] && [ \$(grep -c '\"event\": \"photo\"' events.log) = $clicks ]" ||
  { echo "captures began: $(grep -c '"phase": "began"' events.log), photos: $(grep -c '"event": "photo"' events.log)"
    grep -E '"event": "(captureFailed|capture|photo|camera[A-Za-z]*|edgesLost)"' events.log | cut -c1-400; grep -v DmaBufAllocator daemon.err | head -5; } | sed 's/^/#   /' 
# A photo taken before any frame after its press arrived has no bracket: its frame was the one
# still exposing at the press (offset <= 0), whose start came less than the frame interval the
# service assumed (frameIntervalMs, the median it measured) before the press. A photo with
# neither figure fails: without one, "within one frame interval" would hold for any frame.
check "every daemon photo's frame is the one exposing at its press ($(awk '$2 != "none" { n++ } END { print n + 0 }' zsl-daemon.txt) by the frames around the press, $(awk '$2 == "none" && $3 != "none" { n++ } END { print n + 0 }' zsl-daemon.txt) by the interval assumed)" \
  within_own_interval zsl-daemon.txt

[ "$cpus" -ge 2 ] && taskset -pc 0-$((cpus - 1)) $$ > /dev/null

# Digital zoom (vimc has no ScalerCrop): the centred half of the frame, scaled back to the full size (the default).
"$CHECK" run --board libcamera.json --dir "$WORK/zoom" --zoom 2 --seconds 30 --press-every-ms 400 --stop-file "$WORK/zoom.stop" > zoom.log 2>&1 &
runner=$!
for _ in $(seq 300); do grep -q '"event": "photo"' zoom.log && break; sleep 0.1; done
touch "$WORK/zoom.stop"; wait $runner
zoomed=$(grep -m1 '"event": "photo"' zoom.log | sed -n 's/.*"path": "\([^"]*\)".*/\1/p')
check "zoom 2x keeps the photo's size (${WIDTH}x${HEIGHT}) and shows the middle four bars twice as wide" \
  "$CHECK" verify --jpeg "${zoomed:-missing}" --width $WIDTH --height $HEIGHT --bars --zoom 2
check "(and the unzoomed photo does not pass as zoomed)" bash -c "! '$CHECK' verify --jpeg '$WORK/native.jpg' --width $WIDTH --height $HEIGHT --bars --zoom 2"

# Another camera's node going away does not stop this one: the process also holds vivid's
# node (inherited descriptor 7, as a V4L2 camera in the same process would), vivid is unbound,
# and the libcamera camera, stopped and started for every shot (--low-power, so the backend
# looks for removed nodes each time), keeps taking photos.
vivid=$(grep -l '^vivid' /sys/class/video4linux/video*/name 2>/dev/null | head -1 | xargs -r dirname | xargs -r basename)
if [ -n "$vivid" ] && [ -e /sys/bus/platform/drivers/vivid/vivid.0 ]; then
  "$CHECK" run --board libcamera.json --low-power --dir "$WORK/other" --seconds 90 --press-every-ms 700 \
    --stop-file "$WORK/other.stop" > other.log 2>&1 7< "/dev/$vivid" &
  runner=$!
  for _ in $(seq 300); do grep -q '"event": "photo"' other.log && break; sleep 0.1; done
  echo vivid.0 > /sys/bus/platform/drivers/vivid/unbind
  unbound_at=$(grep -c '"event": "photo"' other.log)
  for _ in $(seq 400); do [ "$(grep -c '"event": "photo"' other.log)" -ge $((unbound_at + 2)) ] && break; sleep 0.1; done
  held_other=$(ls -l /proc/$runner/fd 2>/dev/null | grep -c "/dev/$vivid (deleted)")
  touch "$WORK/other.stop"; wait $runner; status=$?
  echo vivid.0 > /sys/bus/platform/drivers/vivid/bind
  after=$(( $(grep -c '"event": "photo"' other.log) - unbound_at ))
  check "vivid unbound (its removed node held by the same process: $held_other) does not stop the libcamera camera: $after photos after, no captureFailed (exit $status)" \
    bash -c "[ $status = 0 ] && [ $held_other = 1 ] && [ $after -ge 2 ] && ! grep -q captureFailed other.log" || grep captureFailed other.log | head -3 | sed 's/^/#   /'
else
  not_ok "vivid is not loaded: cannot check that another device going away leaves the libcamera camera alone"
fi

# vimc unbound and bound again, $UNBIND_CYCLES times (default 2), while presses keep coming.
cycles=${UNBIND_CYCLES:-2}
"$CHECK" run --board libcamera.json --dir "$WORK/unbind" --seconds 300 --press-every-ms 800 --stop-file "$WORK/unbind.stop" > unbind.log 2>&1 &
runner=$!
# held PID: what outlives an unplug: removed device nodes and dmabufs the process still holds,
# its descriptors and RSS, and the kernel's vmalloc use (vimc's buffers are vmalloc memory).
held() {
  local fds; fds=$(ls -l "/proc/$1/fd" 2>/dev/null)
  echo "fds=$(grep -c ' -> ' <<< "$fds") removedNodes=$(grep -c '/dev/\(video\|media\|v4l-subdev\)[0-9]* (deleted)' <<< "$fds")" \
    "dmabufs=$(grep -c '/dmabuf:' <<< "$fds") rssKiB=$(awk '/^VmRSS/ {print $2}' "/proc/$1/status")" \
    "vmallocUsedKiB=$(awk '/^VmallocUsed/ {print $2}' /proc/meminfo) children=$(pgrep -c -P "$1")"
}
for _ in $(seq 300); do grep -q '"event": "photo"' unbind.log && break; sleep 0.1; done
held_before=$(held $runner)
reopened=0
for cycle in $(seq "$cycles"); do
  vanished=$(grep -c '"kind": "deviceVanished"' unbind.log)
  echo vimc.0 > /sys/bus/platform/drivers/vimc/unbind
  for _ in $(seq 100); do [ "$(grep -c '"kind": "deviceVanished"' unbind.log)" -gt "$vanished" ] && break; sleep 0.1; done
  sleep 1
  echo vimc.0 > /sys/bus/platform/drivers/vimc/bind
  udevadm settle --timeout=30
  # Wait (up to 60 s) for a photo after the reopen that follows this unbind.
  for _ in $(seq 600); do
    awk '/deviceVanished/{f=1; r=0; p=0} f && /cameraReady/{r=1} r && /"event": "photo"/{p=1} END{exit !p}' unbind.log && { reopened=$((reopened + 1)); break; }
    sleep 0.1
  done
  echo "# after unbind $cycle: $(held $runner)"
done
held_after=$(held $runner)
touch "$WORK/unbind.stop"; wait $runner; status=$?
echo "# unbind x$cycles: $(grep -c '"event": "photo"' unbind.log) photos; $(grep -o '"kind": "[a-zA-Z]*"' unbind.log | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
echo "# held before the first unbind: $held_before"
echo "# held after $cycles unbinds:      $held_after"
# libcamera 0.0.3 sees no disconnect when vimc is unbound, and stopping the camera then aborts
# ("data->queuedRequests_.empty() failed in stop()"): the backend notices the camera's removed
# device nodes, leaves the camera unstopped (its objects leak), closes the kernel side under it
# (nodes, dmabufs), and drops the camera manager so that the rebound camera is enumerated
# afresh (a manager that lived on would abort on "a camera with a duplicated ID").
check "the run survives vimc unbound and bound again $cycles times (exit status $status)" test $status = 0
check "the unbind is reported as captureFailed (deviceVanished)" grep -q '"kind": "deviceVanished"' unbind.log
check "the camera is reopened when vimc is back, and presses make photos again, after each of the $cycles unbinds ($reopened)" \
  test "$reopened" = "$cycles"
# The leaked pipeline keeps vimc's two mock IPA buffers (160x120, exported when the camera
# manager enumerates vimc; not the camera's): at most those two more dmabufs per unbind, none
# of the camera's request buffers (4 of 1 MB at 720x480 before its dmabufs were closed).
dmabufs_before=$(sed -n 's/.*dmabufs=\([0-9]*\).*/\1/p' <<< "$held_before") dmabufs_after=$(sed -n 's/.*dmabufs=\([0-9]*\).*/\1/p' <<< "$held_after")
check "after $cycles unbinds the process holds no removed device node and none of the gone camera's buffers (dmabufs $dmabufs_before -> $dmabufs_after)" \
  bash -c "[[ '$held_after' == *' removedNodes=0 '* ]] && (( ${dmabufs_after:-999} <= ${dmabufs_before:-0} + 2 * $cycles ))"
grep -a 'FATAL' unbind.log | head -2 | sed 's/^/#   /'
check "no temporary file is left, and every saved photo is a whole JPEG at the board's size" \
  bash -c "! ls -A '$WORK/unbind' | grep -q '^\\.' && for f in '$WORK'/unbind/IMG_*; do '$CHECK' verify --jpeg \"\$f\" --width $WIDTH --height $HEIGHT > /dev/null || exit 1; done"

# 4. Figures: press -> JPEG (both backends), next to libcamera's cam in the same boot ----------------
libcamerify "$CHECK" bench --board v4l2.json --dir "$WORK/bench" --shots 3 > bench.json 2>&1
echo "# press -> JPEG, libcamerify + V4L2 backend ${WIDTH}x${HEIGHT} RGB3: $(grep '"event": "bench"' bench.json || tail -3 bench.json)"
"$CHECK" bench --board libcamera.json --dir "$WORK/bench" --shots 3 > bench.json 2>&1
echo "# press -> JPEG, libcamera backend ${WIDTH}x${HEIGHT}: $(grep '"event": "bench"' bench.json || tail -3 bench.json)"
# vimc streams only once two buffers are queued: cam --capture=1 never ends, so ask for two.
for _ in 1 2; do
  t0=$(now_ms)
  timeout 30 cam -c 1 --capture=2 -s width=$WIDTH,height=$HEIGHT > cam.log 2>&1 || echo "# cam failed: $(tail -1 cam.log)" >&2
  t1=$(now_ms); echo $((t1 - t0))
done 2> cam-failures.log | stats | sed "s/^/# cam -c 1 --capture=2 ${WIDTH}x${HEIGHT} (start libcamera, configure, 2 frames, no file): /"
cat cam-failures.log
echo "# (cam --capture=1 cannot finish on vimc: cam queues one request, vimc streams only with two queued; --capture=2 is the nearest run)"
for _ in 1 2; do
  t0=$(now_ms)
  "$SHUTTER" capture --board libcamera.json --out "$WORK/once.jpg" > /dev/null 2>&1 || echo "# shutter capture failed" >&2
  t1=$(now_ms); echo $((t1 - t0)); rm -f "$WORK/once.jpg"
done | stats | sed "s/^/# shutter capture, libcamera backend ${WIDTH}x${HEIGHT} (start libcamera, configure, frames, JPEG on disk): /"
for _ in 1 2; do
  t0=$(now_ms)
  libcamerify "$SHUTTER" capture --board v4l2.json --out "$WORK/once.jpg" > /dev/null 2>&1 || echo "# shutter capture failed" >&2
  t1=$(now_ms); echo $((t1 - t0)); rm -f "$WORK/once.jpg"
done | stats | sed "s/^/# libcamerify shutter capture ${WIDTH}x${HEIGHT} (start, open, frames, JPEG on disk): /"

echo "# test-libcamera.sh: $passed passed, $failed failed (${SECONDS} s)"
rm -rf "$WORK"
[ $failed = 0 ]
