#!/usr/bin/env bash
# Runs every Tests/VM/test-*.sh inside the guest and sums their results.
# Usage (inside the VM): SHUTTER=path/to/shutter [VM_SKIP="capture ..."] Tests/VM/run-all.sh
# VM_SKIP names tests to leave out (test-NAME.sh), e.g. the camera tests in the libgpiod 2.x
# run: the capture module does not use libgpiod, so one run of them is enough.
set -u
here=$(dirname "$(readlink -f "$0")")
status=0
for test in "$here"/test-*.sh; do
  name=$(basename "$test" .sh); name=${name#test-}
  if [[ " ${VM_SKIP:-} " == *" $name "* ]]; then echo "# --- $(basename "$test"): skipped (VM_SKIP)"; continue; fi
  echo "# --- $(basename "$test")"
  bash "$test" || status=1
done
exit $status
