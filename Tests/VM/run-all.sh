#!/usr/bin/env bash
# Runs every Tests/VM/test-*.sh inside the guest and sums their results.
# Usage (inside the VM): SHUTTER=path/to/shutter [VM_SKIP="capture ..."] Tests/VM/run-all.sh
# VM_SKIP names tests to leave out (test-NAME.sh), e.g. the camera tests in the libgpiod 2.x
# run: the capture module does not use libgpiod, so one run of them is enough.
# test-libcamera.sh runs only in a guest with vimc loaded (VM_VIMC=1); elsewhere it is skipped.
set -u
here=$(dirname "$(readlink -f "$0")")
status=0
for test in "$here"/test-*.sh; do
  name=$(basename "$test" .sh); name=${name#test-}
  if [[ " ${VM_SKIP:-} " == *" $name "* ]]; then echo "# --- $(basename "$test"): skipped (VM_SKIP)"; continue; fi
  # test-libcamera.sh needs vimc, which only a VM_VIMC=1 guest loads (Tests/run.sh gives it its own boot).
  if [ "$name" = libcamera ] && [ ! -d /sys/bus/platform/drivers/vimc ]; then echo "# --- $(basename "$test"): skipped (no vimc: run the guest with VM_VIMC=1)"; continue; fi
  echo "# --- $(basename "$test")"
  bash "$test" || status=1
done
exit $status
