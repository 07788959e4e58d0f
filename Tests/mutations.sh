#!/usr/bin/env bash
# mutations.sh - the safety tests proven against the faults they guard: each mutation below is
# applied to a scratch copy of the sources, the tests that should catch it run, and the script
# fails if any mutation survives them.
#
#   Tests/mutations.sh           build the scratch copy once, run every mutation's tests
#   Tests/mutations.sh NAME...   only the mutations named
#   Tests/mutations.sh --list    the mutations and the tests that catch each
#   Tests/mutations.sh --prepare only make the scratch copy (to read the patched code)
#   Tests/mutations.sh --help
#
# How: the working tree's files as git sees them (tracked and untracked, not ignored) are copied
# to a scratch package (.build-mutations/src, or $SHUTTER_MUTATIONS_DIR/src), and each mutation's
# patch replaces one exact piece of its file (found exactly once, or the script stops: a patch
# that no longer applies is a mutation that tests nothing) with code that keeps the original and
# adds the mutated form behind a switch read at run time: isMutation("NAME") in Swift (a
# function the script adds to each module it patches), getenv("SHUTTER_MUTATION") in C. One
# debug build of that copy then serves every mutation: each test run sets SHUTTER_MUTATION to
# one name. Compile-time conditions (#if MUTATION_NAME) would need a build per mutation, each
# rebuilding its module, every module above it and the test bundle: minutes each on a small
# machine. With no mutation switched on, the patched code runs as the shipped code does, and
# the tests of every mutation must pass on it first (a test that fails anyway proves nothing).
# The mutations live only here, never in the shipped sources.
#
# The scratch copy is kept between runs and only files whose content changed are rewritten, so
# a second run rebuilds what changed; the first builds everything (the main .build is not
# copied: its build manifest and records name each source by its absolute path, so a copy in
# another folder is built again whole). On a 2-core machine shared with other builds (load 11)
# the first run took 15 minutes (6 of CPU), a run after one module changed under 3.
#
# A mutation is caught when at least one of its tests fails (Swift Testing's "Test … failed");
# prints "mutation NAME: caught by TEST…" or "mutation NAME: SURVIVED", and exits 1 when any
# survived, was not caught cleanly (the test process ended without a failed test) or the
# unmutated tests failed.
#
# Adding one: a `mutation` line (name, the tests' --filter regular expression, the file, the
# original text, the replacement that switches on the mutation) in the table below.
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")/.."
export PATH=/opt/swift/usr/bin:$PATH

names=() filters=() files=() originals=() replacements=()
# mutation NAME FILTER FILE ORIGINAL REPLACEMENT
mutation() {
  names+=("$1") filters+=("$2") files+=("$3") originals+=("$4") replacements+=("$5")
}

# ---- The mutations ------------------------------------------------------------------------
# A press's shot taken twice by the camera director: two photos per click.
mutation TAKE_TWICE 'DaemonTests/fullClickOnTheMockChipTakesAPhoto' \
  Sources/ShutterService/CameraDirector.swift \
  'service.capture(shot, now: now)' \
  'service.capture(shot, now: now); if isMutation("TAKE_TWICE") { service.capture(shot, now: now) }'
# Without hard links (FAT) the rename that names a photo replaces a photo already there.
mutation RENAME_REPLACES 'AtomicFileTests/withoutHardLinksTheRenameItselfRefusesATakenName' \
  Sources/CShutterSystem/system.c \
  'to_directory, to, RENAME_NOREPLACE);' \
  'to_directory, to, getenv("SHUTTER_MUTATION") != NULL && strcmp(getenv("SHUTTER_MUTATION"), "RENAME_REPLACES") == 0 ? 0 : RENAME_NOREPLACE);'
# A photo's bytes written under a name that is not temporary: readers see part of a photo.
mutation PHOTO_NAME_NOT_TEMPORARY 'PhotoWriterTests/noNameHoldsPartOfAPhotoWhileItsBytesAreWritten' \
  Sources/ShutterCapture/PhotoFiles.swift \
  'let temporary = path("\(Self.temporaryPrefix)\(getpid())-\(UInt32.random(in: 0...UInt32.max)).jpg")' \
  'let temporary = path("\(isMutation("PHOTO_NAME_NOT_TEMPORARY") ? "partial-" : Self.temporaryPrefix)\(getpid())-\(UInt32.random(in: 0...UInt32.max)).jpg")'
# An MQTT shot delivered again (QoS 1 is at least once) taken again: no de-duplication by id.
mutation MQTT_SHOT_TAKEN_AGAIN 'MQTTNodeShotTests/aShotDeliveredAgainTakesNoSecondPhoto' \
  Sources/ShutterMQTT/MQTTNode.swift \
  'guard shot.origin != topics.node, book.firstSighting(of: shot.id) else { return }' \
  'guard shot.origin != topics.node, isMutation("MQTT_SHOT_TAKEN_AGAIN") || book.firstSighting(of: shot.id) else { return }'
# A subscriber that never reads kept every line: its queue without its bound.
mutation SUBSCRIBER_QUEUE_UNBOUNDED 'APIServerTests/aSubscriberThatNeverReadsLosesTheOldestLinesAndIsTold' \
  Sources/ShutterAPI/APIServer.swift \
  'eventLimit: limits.subscriberQueueLimit, now: now)' \
  'eventLimit: isMutation("SUBSCRIBER_QUEUE_UNBOUNDED") ? Int.max : limits.subscriberQueueLimit, now: now)'
# A frame the driver flags as damaged (V4L2_BUF_FLAG_ERROR) kept in the ring.
mutation V4L2_ERROR_FLAG_IGNORED 'WholeFrameTests/aFrameTheDriverFlagsAsDamagedIsDropped' \
  Sources/ShutterCapture/V4L2.swift \
  'if flags & CV4L2_BUF_FLAG_ERROR != 0 { return false }' \
  'if flags & CV4L2_BUF_FLAG_ERROR != 0 && !isMutation("V4L2_ERROR_FLAG_IGNORED") { return false }'
# An end-of-frame stamp taken as the start of exposure: every V4L2 frame a frame late.
mutation EOF_STAMP_NOT_SHIFTED 'ExposureStartTests/anEndOfFrameStampIsMovedBackOneFrameInterval' \
  Sources/ShutterCapture/V4L2.swift \
  'return time - (interval ?? .zero)' \
  'return isMutation("EOF_STAMP_NOT_SHIFTED") ? time : time - (interval ?? .zero)'
# -------------------------------------------------------------------------------------------

prepare_only=no
case "${1:-}" in
  -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
  --prepare) prepare_only=yes; shift ;;
  --list) for i in "${!names[@]}"; do echo "${names[$i]}: ${files[$i]}, caught by ${filters[$i]}"; done; exit 0 ;;
  -*) echo "mutations.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
esac
chosen=()
for name in "$@"; do
  found=no
  for i in "${!names[@]}"; do [ "${names[$i]}" = "$name" ] && { chosen+=("$i"); found=yes; }; done
  [ $found = yes ] || { echo "mutations.sh: no mutation '$name' (try --list)" >&2; exit 2; }
done
[ $# -gt 0 ] || chosen=("${!names[@]}")

start=$SECONDS
scratch=${SHUTTER_MUTATIONS_DIR:-$PWD/.build-mutations}
staging=$(mktemp -d /tmp/shutter-mutations.XXXXXX)
trap 'rm -rf "$staging"' EXIT
trap 'exit 1' INT TERM

# The tree as git sees it, then every patch, in a staging copy.
git ls-files -z --cached --others --exclude-standard |
  while IFS= read -r -d '' file; do [ -f "$file" ] && printf '%s\0' "$file"; done |
  tar --null -T - -cf - | tar -xf - -C "$staging"
for i in "${!names[@]}"; do
  file=$staging/${files[$i]}
  [ -f "$file" ] || { echo "mutations.sh: ${names[$i]}: no file ${files[$i]}" >&2; exit 1; }
  ORIGINAL=${originals[$i]} REPLACEMENT=${replacements[$i]} NAME=${names[$i]} perl -0777 -i -pe '
    my ($o, $r) = ($ENV{ORIGINAL}, $ENV{REPLACEMENT});
    my $n = () = /\Q$o\E/g;
    die "mutations.sh: $ENV{NAME}: the original text is found $n times in $ARGV, not once\n" unless $n == 1;
    s/\Q$o\E/$r/;' "$file"
  case $file in
    *.swift)
      switch=$(dirname "$file")/MutationSwitch.swift
      [ -f "$switch" ] || cat > "$switch" <<'EOF'
#if canImport(Glibc)
import Glibc
#endif

/// Whether the run switched mutation `name` on (Tests/mutations.sh's scratch copy only).
func isMutation(_ name: String) -> Bool {
    guard let value = getenv("SHUTTER_MUTATION") else { return false }
    return String(cString: value) == name
}
EOF
      ;;
    *.c) grep -q '#include <string.h>' "$file" || sed -i '0,/#include/s//#include <stdlib.h>\n#include <string.h>\n&/' "$file" ;;
  esac
done

# Into the scratch package, rewriting only what changed (unchanged files keep their times, so
# the build after the first one rebuilds only those).
mkdir -p "$scratch/src"
(cd "$staging" && find . -type f -print0) | while IFS= read -r -d '' file; do
  cmp -s "$staging/$file" "$scratch/src/$file" || { mkdir -p "$(dirname "$scratch/src/$file")"; cp "$staging/$file" "$scratch/src/$file"; }
done
(cd "$scratch/src" && find . -path ./.build -prune -o -type f -print0) | while IFS= read -r -d '' file; do
  [ -f "$staging/$file" ] || rm -f "$scratch/src/$file"
done

if [ $prepare_only = yes ]; then echo "mutations.sh: the scratch copy is in $scratch/src"; exit 0; fi

cd "$scratch/src"
echo "mutations.sh: building the scratch copy in $scratch/src"
swift build --build-tests > "$staging/build.log" 2>&1 || { grep -E 'error:' "$staging/build.log" || tail -n 40 "$staging/build.log"; exit 1; }
echo "mutations.sh: built ($((SECONDS - start)) s)"

log=$staging/test.log
run_tests() {   # run_tests MUTATION FILTER: the tests, with MUTATION switched on ("" for none)
  SHUTTER_MUTATION=$1 swift test --skip-build --filter "$2" > "$log" 2>&1
}
failed_tests() { sed 's/\x1b\[[0-9;]*m//g' "$log" | sed -nE 's/.*Test ([^ ]+) failed after.*/\1/p' | sort -u | paste -sd ' '; }

all=$(for i in "${chosen[@]}"; do printf '%s|' "${filters[$i]}"; done)
if ! run_tests "" "${all%|}"; then
  echo "mutations.sh: the tests fail with no mutation switched on: $(failed_tests)"
  tail -n 40 "$log"
  exit 1
fi
echo "mutations.sh: with no mutation, the tests pass"

status=0
for i in "${chosen[@]}"; do
  name=${names[$i]}
  if run_tests "$name" "${filters[$i]}"; then
    echo "mutation $name: SURVIVED (${filters[$i]} passed)"; status=1
  elif caught=$(failed_tests) && [ -n "$caught" ]; then
    echo "mutation $name: caught by $caught"
    sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E 'recorded an issue' | head -n 3 | cut -c1-300 | sed 's/^/    /'
  else
    echo "mutation $name: NOT CAUGHT CLEANLY (the tests ended without a failed test)"; tail -n 20 "$log"; status=1
  fi
done
echo "mutations.sh: ${#chosen[@]} mutations in $((SECONDS - start)) s"
exit $status
