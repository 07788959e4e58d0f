#!/usr/bin/env bash
# Tests/VM/test-photo-files.sh - a photo's name against the real kernel's file systems: it never
# holds part of a photo, and it never replaces another photo.
#
# The photos' writes are stretched (Tests/VM/probes/slow-write.c, LD_PRELOAD: every write() under
# the photo directory sleeps and takes at most 1 KiB, as a slow card's would), so that
#   - kill -9 lands while a photo's bytes are going in: no final name holds part of it;
#   - a reader looking at the directory as often as it can (Tests/VM/probes/photo-watch.c) while
#     photos are written never sees a final name with less than a whole JPEG;
#   - a disk that fills in the middle of a photo leaves nothing under a final name, the daemon
#     reports diskFull, and takes the next photo once space is freed.
# And on a real vfat image (loop-mounted; FAT has neither hard links nor symlinks, so the writer
# names a photo with renameat2(RENAME_NOREPLACE)): photos whose fixed name collides are given
# variants, never written over; two daemons racing for the same names replace none of each
# other's photos, even with the time between finding a name free and renaming to it stretched;
# latest.jpg is a copy of the newest photo.
#
# The daemon runs on the simulator board (the synthetic camera: no device, so two writers can
# run at once) at 640x360. Run inside the VM guest as root; env SHUTTER = the shutter binary.
# Needs gcc; mkfs.vfat (dosfstools) and the loop and vfat modules for the FAT part.
set -u
here=$(dirname "$(readlink -f "$0")")
ROOT=$(cd "$here/../.." && pwd)
. "$here/lib.sh"
: "${SHUTTER:?set SHUTTER to the shutter binary}"
work=$(mktemp -d /tmp/photo-files.XXXXXX)
gcc -O2 -shared -fPIC -o "$work/slow-write.so" "$here/probes/slow-write.c" -ldl || { not_ok "build slow-write.so"; finish; exit; }
gcc -O2 -o "$work/photo-watch" "$here/probes/photo-watch.c" || { not_ok "build photo-watch"; finish; exit; }

# board DIRECTORY TEMPLATE: the simulator board at 640x360, its photos in DIRECTORY named TEMPLATE.
board() {
  sed -e "s|\"directory\": \"photos\"|\"directory\": \"$1\"|" -e "s|\"template\": \"[^\"]*\"|\"template\": \"$2\"|" \
    -e 's|"width": 1280, "height": 720|"width": 640, "height": 360|' "$ROOT/Boards/simulator.json"
}
# A trace that only keeps the daemon reading (a trace, not the demo an empty input plays).
echo '{"t": 0.05, "line": "secondary", "active": false}' > "$work/idle.trace"
wait_until() { for _ in $(seq 900); do "$@" && return 0; sleep 0.1; done; return 1; }
# whole_jpeg FILE: FFD8 at its start and FFD9 at its end.
whole_jpeg() { [ "$(head -c 2 "$1" | od -An -tx1 | tr -d ' ')" = ffd8 ] && [ "$(tail -c 2 "$1" | od -An -tx1 | tr -d ' ')" = ffd9 ]; }
# short_photos DIR: every name in DIR that is not a temporary file and not a whole JPEG, with its size.
short_photos() {
  local f
  for f in "$1"/* "$1"/.[!.]*; do
    [ -e "$f" ] || continue
    case $(basename "$f") in .shutter-tmp-*) continue ;; esac
    whole_jpeg "$f" || echo "$(basename "$f") ($(stat -c %s "$f") bytes)"
  done
}
temporaries() { ls -A "$1" | grep '^\.shutter-tmp-' | tr '\n' ' '; }
photo_events() { grep -c '"event": "photo"' "$1"; }

# start_slow_daemon NAME DIRECTORY: a daemon whose writes under DIRECTORY are stretched (100 ms
# before each KiB: a photo of 640x360, about 28 KiB, takes about 3 s), serving $work/NAME.sock;
# events in $work/NAME.events, each slowed write logged in $work/NAME.writes. Sets $daemon.
start_slow_daemon() {
  board "$2" 'IMG_{seq}.jpg' > "$work/$1.json"
  rm -f "$work/$1.sock"
  SLOW_WRITE_MATCH="$2/" SLOW_WRITE_CHUNK=1024 SLOW_WRITE_DELAY_MS=100 SLOW_WRITE_LOG="$work/$1.writes" \
    LD_PRELOAD="$work/slow-write.so" "$SHUTTER" run --board "$work/$1.json" --no-state --socket "$work/$1.sock" \
    < "$work/idle.trace" > "$work/$1.events" 2> "$work/$1.err" &
  daemon=$!
  wait_until bash -c "'$SHUTTER' status --socket '$work/$1.sock' 2>/dev/null | grep -q '^camera .*: streaming'"
}
stop_daemon() { kill -TERM $daemon 2>/dev/null; wait $daemon 2>/dev/null; }
# wait_for_lines FILE N: until FILE has N lines (30 s at most), looking every 20 ms with bash's
# own read: a tool started for each look (about 0.1 s under TCG) could miss a photo's writes.
wait_for_lines() {
  local n line
  for _ in $(seq 1500); do
    n=0
    while IFS= read -r line; do n=$((n + 1)); done < "$1"
    [ $n -ge "$2" ] && return 0
    sleep 0.02
  done
  return 1
}

# 1a. kill -9 while a photo's bytes are going in ---------------------------------------------------
# The kill comes once the daemon has made three of a photo's slowed writes (3 KiB of it are in),
# long before its last; up to 3 tries, for a kill that missed.
mkdir -p "$work/killed"
caught=0 tries=0
while [ $caught = 0 ] && [ $tries -lt 3 ]; do
  tries=$((tries + 1))
  start_slow_daemon killed "$work/killed"
  : > "$work/killed.writes"
  "$SHUTTER" ctl --socket "$work/killed.sock" capture > /dev/null 2>&1
  wait_for_lines "$work/killed.writes" 3
  kill -9 $daemon; wait $daemon 2>/dev/null
  writes=$(wc -l < "$work/killed.writes")
  # Landed mid-photo: a file under some name (the temporary one) holds part of a JPEG.
  partial=$(for f in "$work"/killed/* "$work"/killed/.[!.]*; do [ -e "$f" ] && ! whole_jpeg "$f" && echo "$(basename "$f")"; done | tr '\n' ' ')
  [ -n "$partial" ] && caught=1
  echo "# kill -9 try $tries: $writes slowed writes (1 KiB each) before the kill, $(photo_events "$work/killed.events") photos saved; left: $(ls -A "$work/killed" | tr '\n' ' '); partly written: ${partial:-none}"
done
check "kill -9: it landed while a photo's bytes were being written (a file holds part of one; try $tries of at most 3)" [ $caught = 1 ]
short=$(short_photos "$work/killed")
check "kill -9 during the writes: no final name holds part of a photo (${short:-none short}; files: $(ls -A "$work/killed" | tr '\n' ' '))" test -z "$short"

# 1b. A reader looking while photos are written --------------------------------------------------
mkdir -p "$work/watched"
start_slow_daemon watched "$work/watched"
rm -f "$work/watch.stop"
"$work/photo-watch" "$work/watched" "$work/watch.stop" > "$work/watch.out" &
watcher=$!
for _ in 1 2 3; do "$SHUTTER" ctl --socket "$work/watched.sock" --wait capture > /dev/null 2>&1; done
touch "$work/watch.stop"; wait $watcher
stop_daemon
summary=$(tail -n 1 "$work/watch.out")
partial=$(echo "$summary" | sed -n 's/.*partial-temporaries \([0-9]*\).*/\1/p')
echo "# reader: $summary; $(photo_events "$work/watched.events") photos"
check "reader: it looked while the photos' bytes were going in ($partial looks at a partly written temporary file)" \
  bash -c "[ '${partial:-0}' -ge 3 ] && [ $(photo_events "$work/watched.events") = 3 ]"
check "reader: no look saw a final name with less than a whole JPEG ($summary)" \
  bash -c "grep -q ' short 0 ' '$work/watch.out' && ! grep -q '^short ' '$work/watch.out'" || sed 's/^/#   /' "$work/watch.out" | head -5

# 1c. A disk that fills in the middle of a photo --------------------------------------------------
# A tmpfs with room for 8 KiB more once a filler (beside the photo directory) is in: the photo's
# first writes go in, a later one fails with ENOSPC. Removing the filler frees the space.
mkdir -p "$work/disk" && mount -t tmpfs -o size=256k tmpfs "$work/disk" && mkdir "$work/disk/photos"
start_slow_daemon full "$work/disk/photos"
filler_kib=$(( $(df -k --output=avail "$work/disk" | tail -n 1) - 8 ))
dd if=/dev/zero of="$work/disk/filler" bs=1k count=$filler_kib status=none
rm -f "$work/watch.stop"
"$work/photo-watch" "$work/disk/photos" "$work/watch.stop" > "$work/full.watch" &
watcher=$!
: > "$work/full.writes"
"$SHUTTER" ctl --socket "$work/full.sock" capture > /dev/null 2>&1
wait_until grep -q '"kind": "diskFull"' "$work/full.events"
failed_writes=$(wc -l < "$work/full.writes")
left=$(ls -A "$work/disk/photos" | tr '\n' ' ')
rm "$work/disk/filler"
"$SHUTTER" ctl --socket "$work/full.sock" --wait capture > "$work/full.waited" 2>&1
touch "$work/watch.stop"; wait $watcher
stop_daemon
echo "# full disk: $failed_writes slowed writes before ENOSPC; left after the failure: ${left:-nothing}; reader: $(tail -n 1 "$work/full.watch")"
check "disk full mid-photo: the daemon reports diskFull (ENOSPC) after some of the photo's writes went in ($failed_writes)" \
  bash -c "grep -q '\"kind\": \"diskFull\", \"errno\": 28' '$work/full.events' && [ $failed_writes -ge 2 ]"
check "disk full mid-photo: nothing is left under a final name or a temporary one (${left:-nothing})" test -z "$left"
check "disk full mid-photo: no look during the writes saw a final name with less than a whole JPEG ($(tail -n 1 "$work/full.watch"))" \
  bash -c "grep -q ' short 0 partial-temporaries [1-9]' '$work/full.watch' && ! grep -q '^short ' '$work/full.watch'"
waited=$(cat "$work/full.waited")
check "disk full: once space is freed the next photo is taken, whole: $waited" \
  bash -c "[ -f '$waited' ] && [ $(photo_events "$work/full.events") = 1 ] && $(declare -f whole_jpeg); whole_jpeg '$waited'"
umount "$work/disk"

# 2. A real vfat image ------------------------------------------------------------------------------
# vfat's default code page and character sets are modules of their own.
modprobe -a loop vfat nls_cp437 nls_ascii nls_utf8 2>/dev/null
truncate -s 32M "$work/fat.img" && mkfs.vfat -n SHUTTER "$work/fat.img" > /dev/null &&
  mkdir -p "$work/fat" && mount -t vfat -o loop "$work/fat.img" "$work/fat"
check "vfat: a loop-mounted image made by mkfs.vfat ($(findmnt -n -o FSTYPE "$work/fat"))" test "$(findmnt -n -o FSTYPE "$work/fat")" = vfat || { finish; exit; }
mkdir -p "$work/fat/fixed"
board "$work/fat/fixed" 'photo.jpg' > "$work/fixed.json"
# Three photos one after another under one fixed name: photo.jpg, then its variants.
for n in 1 2 3; do
  "$SHUTTER" capture --board "$work/fixed.json" > "$work/fixed.$n" 2>&1
  [ $n = 1 ] && first=$(md5sum < "$work/fat/fixed/photo.jpg" 2>/dev/null)
done
paths=$(sed -n 's/.*"path": "\([^"]*\)".*/\1/p' "$work"/fixed.[123] | xargs -n1 basename 2>/dev/null | tr '\n' ' ')
check "vfat: a fixed name that collides gets variants, never written over (photos named: $paths)" \
  bash -c "[ '$paths' = 'photo.jpg photo-2.jpg photo-3.jpg ' ] && [ \"\$(md5sum < '$work/fat/fixed/photo.jpg')\" = '$first' ]" ||
  sed 's/^/#   /' "$work"/fixed.[123] | head -6
short=$(short_photos "$work/fat/fixed")
check "vfat: every photo is a whole JPEG (${short:-all whole}: $(ls -A "$work/fat/fixed" | tr '\n' ' '))" test -z "$short"
check "vfat: latest.jpg is a file (FAT has no symlinks) with the newest photo's bytes" \
  bash -c "[ -f '$work/fat/fixed/latest.jpg' ] && [ ! -L '$work/fat/fixed/latest.jpg' ] && cmp '$work/fat/fixed/latest.jpg' '$work/fat/fixed/photo-3.jpg'"

# Two daemons racing for the same names: each holds the full button for a 6 s burst of photos
# named race.jpg (so every photo after the first must find a free variant, and the two look for
# the same ones at once). On FAT the kernel's link answers EEXIST for a name that exists and
# EPERM (no hard links) for a free one, after which the writer renames to it; slow-write.so
# holds that EPERM 300 ms, so the other writer finds the same name free meanwhile and both
# rename to it: only renameat2's RENAME_NOREPLACE keeps the second from replacing the first.
# None may replace another: as many files as photo events, no path reported twice, each whole.
mkdir -p "$work/fat/race"
board "$work/fat/race" 'race.jpg' | sed 's|"burst": true|"burst": true, "burstIntervalMs": 100|' > "$work/race.json"
printf '%s\n' '{"t": 0.5, "line": "half", "active": true}' '{"t": 0.55, "line": "full", "active": true}' \
  '{"t": 6.55, "line": "full", "active": false}' '{"t": 6.6, "line": "half", "active": false}' > "$work/burst.trace"
racers=()
for writer in 1 2; do
  SLOW_LINK_DELAY_MS=300 LD_PRELOAD="$work/slow-write.so" \
    "$SHUTTER" run --board "$work/race.json" --no-state < "$work/burst.trace" > "$work/race.$writer" 2> "$work/race.$writer.err" &
  racers+=($!)
done
wait "${racers[@]}"
taken=$(cat "$work"/race.[12] | grep -c '"event": "photo"')
files=$(ls "$work/fat/race" | grep -c '^race.*\.jpg$')
twice=$(sed -n 's/.*"event": "photo".*"path": "\([^"]*\)".*/\1/p' "$work"/race.[12] | sort | uniq -d | tr '\n' ' ')
# How often, in the order of the names' variant numbers, the writer changes: 1 for two bursts
# one after the other, more for two that took names at the same time.
switches=$(for writer in 1 2; do sed -n "s/.*\"event\": \"photo\".*\"path\": \"[^\"]*\/race-\{0,1\}\([0-9]*\)\.jpg\".*/\1:$writer/p" "$work/race.$writer"; done |
  awk -F: '{ print ($1 == "" ? 1 : $1), $2 }' | sort -n | awk 'NR > 1 && $2 != last { s++ } { last = $2 } END { print s + 0 }')
echo "# vfat race: writer 1 took $(photo_events "$work/race.1"), writer 2 $(photo_events "$work/race.2"); $files files; the writer changes $switches times along the names"
check "vfat race: no photo replaced: $files files for $taken photos taken, no path given twice (${twice:-none}), the two took names at the same time ($switches changes)" \
  bash -c "[ '$taken' -ge 4 ] && [ '$switches' -ge 2 ] && [ '$files' = '$taken' ] && [ -z '$twice' ]" ||
  sed 's/^/#   /' "$work"/race.[12].err | tail -n 6
short=$(short_photos "$work/fat/race")
check "vfat race: every photo is a whole JPEG and no temporary file is left (${short:-all whole}; temporaries: $(temporaries "$work/fat/race"))" \
  bash -c "[ -z '$short' ] && [ -z '$(temporaries "$work/fat/race")' ]"
umount "$work/fat"

rm -rf "$work"
finish
