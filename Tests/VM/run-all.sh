#!/usr/bin/env bash
# Runs every Tests/VM/test-*.sh inside the guest and sums their results.
# Usage (inside the VM): SHUTTER=path/to/shutter Tests/VM/run-all.sh
set -u
here=$(dirname "$(readlink -f "$0")")
status=0
for test in "$here"/test-*.sh; do
  echo "# --- $(basename "$test")"
  bash "$test" || status=1
done
exit $status
