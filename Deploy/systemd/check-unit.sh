#!/usr/bin/env bash
# check-unit.sh - verify the systemd unit and rate its hardening.
#
#   Deploy/systemd/check-unit.sh [--binary PATH] [--table FILE] [--max EXPOSURE]
#   Deploy/systemd/check-unit.sh --help
#
# Runs `systemd-analyze verify` on Deploy/systemd/shutter.service (its ExecStart pointed
# at PATH, default .build/debug/shutter, since verify insists the binary exists), then
# `systemd-analyze security --offline=true` and fails when the overall exposure is not
# below EXPOSURE (default 4; systemd calls 0-2 safe, 2-4 OK, above 9 unsafe).
# --table FILE keeps the security table. Exit status 0 when both pass.
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")/../.."
binary=.build/debug/shutter table="" max=4
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary=$2; shift 2 ;;
    --table) table=$2; shift 2 ;;
    --max) max=$2; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "check-unit.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done
command -v systemd-analyze > /dev/null || { echo "check-unit.sh: systemd-analyze not found (apt-get install systemd)" >&2; exit 1; }
[ -x "$binary" ] || { echo "check-unit.sh: no binary at $binary (swift build first, or --binary PATH)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sed "s|/usr/local/bin/shutter|$(readlink -f "$binary")|" Deploy/systemd/shutter.service > "$work/shutter.service"
status=0
if systemd-analyze verify "$work/shutter.service" > "$work/verify.out" 2>&1 && [ ! -s "$work/verify.out" ]; then
  echo "ok - systemd-analyze verify shutter.service: no complaints"
else
  echo "not ok - systemd-analyze verify shutter.service:"; sed 's/^/  /' "$work/verify.out"; status=1
fi
systemd-analyze security --offline=true "$work/shutter.service" > "$work/security.out" 2>&1 || true
[ -n "$table" ] && cp "$work/security.out" "$table"
exposure=$(sed -n 's/.*Overall exposure level for shutter.service: \([0-9.]*\).*/\1/p' "$work/security.out")
if [ -n "$exposure" ] && awk -v e="$exposure" -v m="$max" 'BEGIN { exit !(e < m) }'; then
  echo "ok - systemd-analyze security: exposure $exposure (below $max)"
else
  echo "not ok - systemd-analyze security: exposure '${exposure:-?}', must be below $max:"; grep '✗' "$work/security.out" | sed 's/^/  /'; status=1
fi
exit $status
