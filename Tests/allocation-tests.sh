#!/usr/bin/env bash
# allocation-tests.sh - run the tests that count heap allocations (StreamingAllocationTests)
# under Deploy/vm/malloc-count.c, and fail when they did not run.
#
#   swift build --build-tests && Tests/allocation-tests.sh
#   SWIFT_SCRATCH=.build-dev Tests/allocation-tests.sh     tests built with --scratch-path .build-dev
#
# The tests skip themselves without the counter, so a plain `swift test` (and CI) passes without
# proving anything: this builds malloc-count.so into a temporary directory (cc -O2 -shared -fPIC),
# runs `swift test --skip-build --filter StreamingAllocationTests` with it in LD_PRELOAD (each
# test reads its own thread's count through dlsym), and fails unless every expected test passed
# and none was skipped.
# It builds nothing: build the tests first, into the same scratch path.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
scratch=${SWIFT_SCRATCH:-.build}
# The tests that must have run and passed (Tests/ShutterCaptureTests/StreamingAllocationTests.swift).
expected=(libcameraReadsIntoAKeptArrayWithoutAllocating theCaptureServiceStreamsWithoutAllocating aCroppedPreviewWithAnEffectAllocatesNoMoreThanAPlainOne)

work=$(mktemp -d /tmp/allocation-tests.XXXXXX)
trap 'rm -rf "$work"' EXIT
cc -O2 -shared -fPIC -o "$work/malloc-count.so" "$root/Deploy/vm/malloc-count.c"

cd "$root"
status=0
LD_PRELOAD="$work/malloc-count.so" \
  swift test --skip-build --scratch-path "$scratch" --filter StreamingAllocationTests > "$work/output" 2>&1 || status=$?
cat "$work/output"

failed=0
# Swift Testing prints one line a test: "✔ Test NAME() passed", "➜ Test NAME() skipped", "✘ Test NAME() failed".
if grep -qE '^➜ (Suite|Test) .* skipped' "$work/output"; then
  echo "allocation-tests: a test was skipped: malloc-count's counter was not seen (LD_PRELOAD)" >&2
  failed=1
fi
for name in "${expected[@]}"; do
  if ! grep -q "^✔ Test $name() passed" "$work/output"; then
    echo "allocation-tests: $name did not run and pass" >&2
    failed=1
  fi
done
if [ "$status" -ne 0 ]; then
  echo "allocation-tests: swift test exited with status $status" >&2
  failed=1
fi
if [ "$failed" -ne 0 ]; then exit 1; fi
echo "allocation-tests: ${#expected[@]} allocation test(s) ran under malloc-count and passed"
