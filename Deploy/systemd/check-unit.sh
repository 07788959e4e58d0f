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
# --table FILE keeps the security table. Also checks what the unit must allow (the DMA heaps,
# netlink, no PrivateNetwork=, no IP), its ExecReload, and the unit with install.sh
# --hook-network's drop-in (Deploy/systemd/hook-network.conf). Exit status 0 when all pass.
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
# What libcamera needs of the sandbox, and what the unit's commands must do. Each line is read from
# the unit itself (the last assignment of a key wins, as systemd reads it).
unit=Deploy/systemd/shutter.service
last() { sed -n "s/^$1=//p" "$unit" | tail -n 1; }
want() {  # want DESCRIPTION COMMAND...
  local description=$1; shift
  if "$@"; then echo "ok - $description"; else echo "not ok - $description"; status=1; fi
}
# libcamera's Raspberry Pi pipeline allocates its buffers (the lens shading table, the ISP's
# frames) from a DMA heap, /dev/dma_heap/linux,cma or .../system (src/libcamera/dma_buf_allocator.cpp);
# without it configure() fails with -ENOMEM. The heaps' char devices are "dma_heap" in /proc/devices.
want "DeviceAllow= lets libcamera allocate from the DMA heaps (char-dma_heap rw)" grep -qx 'DeviceAllow=char-dma_heap rw' "$unit"
# libcamera's device enumerator listens for hot-plug on a udev netlink socket (udev_monitor_new_from_netlink).
want "RestrictAddressFamilies= allows AF_UNIX and AF_NETLINK (libcamera's hot-plug monitor): $(last RestrictAddressFamilies)" \
  bash -c "grep '^RestrictAddressFamilies=' '$unit' | tail -n 1 | grep -qw AF_NETLINK && grep '^RestrictAddressFamilies=' '$unit' | tail -n 1 | grep -qw AF_UNIX"
want "no PrivateNetwork= (a network namespace of its own cuts the netlink socket off from udev's events)" \
  bash -c "[ '$(last PrivateNetwork)' != yes ]"
# No IP all the same: no IP sockets, no IP traffic.
want "no IP: IPAddressDeny=any and no AF_INET/AF_INET6 in RestrictAddressFamilies=" \
  bash -c "[ '$(last IPAddressDeny)' = any ] && ! grep '^RestrictAddressFamilies=' '$unit' | grep -qE 'AF_INET6?( |$)'"
# A signal cannot say that the board was refused: systemctl reload must fail then.
want "ExecReload= asks the daemon (shutter reload), which fails on a refused board: $(last ExecReload)" \
  bash -c "[ '$(last ExecReload)' = '/usr/local/bin/shutter reload --socket /run/shutter/shutter.sock' ]"
systemd-analyze security --offline=true "$work/shutter.service" > "$work/security.out" 2>&1 || true
[ -n "$table" ] && cp "$work/security.out" "$table"
exposure=$(sed -n 's/.*Overall exposure level for shutter.service: \([0-9.]*\).*/\1/p' "$work/security.out")
if [ -n "$exposure" ] && awk -v e="$exposure" -v m="$max" 'BEGIN { exit !(e < m) }'; then
  echo "ok - systemd-analyze security: exposure $exposure (below $max)"
else
  echo "not ok - systemd-analyze security: exposure '${exposure:-?}', must be below $max:"; grep '✗' "$work/security.out" | sed 's/^/  /'; status=1
fi
# With Deploy/install.sh --hook-network's drop-in: hooks reach the network, the rest of the sandbox stays.
mkdir -p "$work/hook-network/shutter.service.d"
cp "$work/shutter.service" "$work/hook-network/"
cp Deploy/systemd/hook-network.conf "$work/hook-network/shutter.service.d/"
if systemd-analyze verify "$work/hook-network/shutter.service" > "$work/verify-network.out" 2>&1 && [ ! -s "$work/verify-network.out" ]; then
  echo "ok - systemd-analyze verify shutter.service with hook-network.conf: no complaints"
else
  echo "not ok - systemd-analyze verify shutter.service with hook-network.conf:"; sed 's/^/  /' "$work/verify-network.out"; status=1
fi
systemd-analyze security --offline=true "$work/hook-network/shutter.service" > "$work/security-network.out" 2>&1 || true
network_exposure=$(sed -n 's/.*Overall exposure level for shutter.service: \([0-9.]*\).*/\1/p' "$work/security-network.out")
want "hook-network.conf opens IP sockets and traffic (the hooks' uploads) and nothing else: exposure ${network_exposure:-?} (below $max)" \
  bash -c "grep -q '✗ RestrictAddressFamilies=~AF_(INET|INET6)' '$work/security-network.out' && grep -q '✗ IPAddressDeny=' '$work/security-network.out' \
    && [ \$(grep -c '✗' '$work/security-network.out') = \$((\$(grep -c '✗' '$work/security.out') + 2)) ] \
    && awk -v e='${network_exposure:-99}' -v m='$max' 'BEGIN { exit !(e < m) }'"
exit $status
