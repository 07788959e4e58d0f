#!/usr/bin/env bash
# test-unit-sandbox.sh - what libcamera needs on a Pi, under the installed unit's sandbox.
#
#   VM_SYSTEMD=1 Deploy/vm/run-in-vm.sh -- bash Tests/VM/test-unit-sandbox.sh
#
# Needs systemd as PID 1 (VM_SYSTEMD=1; it also gives the guest the DMA heaps). A probe
# (Tests/VM/probes/dma-heap-probe.c) does what libcamera's Raspberry Pi pipeline and device
# enumerator do: allocate and map a buffer from /dev/dma_heap/system, open udev's netlink
# socket; and what shutter's photo encode does: make its thread SCHED_BATCH. It runs as a
# unit made from Deploy/systemd/shutter.service itself (user shutter, every hardening line as
# installed) with only ExecStart swapped for the probe and the type made oneshot; then from
# copies without DeviceAllow=char-dma_heap, without AF_NETLINK and without
# SystemCallFilter=sched_setscheduler, which must fail with the errors a Pi user would see, so
# the allowances are shown to be what lets libcamera work and the encode run as batch work.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
if [ "$(cat /proc/1/comm)" != systemd ]; then
  skip "the unit's sandbox: PID 1 is not systemd (run with VM_SYSTEMD=1)"; finish; exit
fi
here=$(cd "$(dirname "$0")/../.." && pwd)

gcc -O2 -Wall -o /usr/local/bin/dma-heap-probe "$here/Tests/VM/probes/dma-heap-probe.c" || { not_ok "compile the probe"; finish; exit; }
getent group gpio > /dev/null || groupadd --system gpio
getent group shutter > /dev/null || groupadd --system shutter
id shutter > /dev/null 2>&1 || useradd --system --gid shutter --groups gpio,video --no-create-home --shell /usr/sbin/nologin shutter
cp "$here/Deploy/udev/99-shutter.rules" /etc/udev/rules.d/
udevadm control --reload && udevadm trigger --subsystem-match=dma_heap && udevadm settle --timeout=60
check "the udev rule gives /dev/dma_heap/system to group video, 0660" \
  bash -c '[ "$(stat -c %G:%a /dev/dma_heap/system)" = video:660 ] || { stat -c "%U:%G %a" /dev/dma_heap/system; false; }'

# probe_unit NAME [SED-ARGS...]: the installed unit, the daemon replaced by the probe.
probe_unit() {
  local name=$1; shift
  sed -e 's|^ExecStart=.*|ExecStart=/usr/local/bin/dma-heap-probe|' -e 's|^Type=notify|Type=oneshot|' \
      -e '/^WatchdogSec=/d' -e '/^ExecReload=/d' -e '/^Restart=/d' -e '/^NotifyAccess=/d' "$@" \
      "$here/Deploy/systemd/shutter.service" > "/run/systemd/system/$name.service"
}
# run_probe NAME: start it (oneshot: waits), print what it printed.
run_probe() {
  systemctl daemon-reload
  local status=0
  systemctl start "$1.service" || status=$?
  journalctl -q -u "$1.service" -o cat --no-pager | grep -v '^\(Starting\|Finished\|Failed\|Started\|Deactivated\)\|\.service:' 
  return $status
}
export -f run_probe

probe_unit shutter-probe
check "under the unit's sandbox: allocates from the DMA heap, opens udev's netlink socket, makes a thread SCHED_BATCH" run_probe shutter-probe
check "  ... as user shutter, with the unit's hardening" \
  bash -c '[ "$(systemctl show -p User --value shutter-probe.service)" = shutter ] && [ "$(systemctl show -p DevicePolicy --value shutter-probe.service)" = closed ] || { systemctl show -p User -p DevicePolicy shutter-probe.service; false; }'
echo "# the probe under the unit: $(journalctl -q -u shutter-probe.service -o cat --no-pager | grep -E 'allocated|netlink|SCHED_BATCH' | tr '\n' ';')"

probe_unit shutter-probe-no-heap -e '/^DeviceAllow=char-dma_heap/d'
check "without DeviceAllow=char-dma_heap the heap is refused (EPERM), as libcamera's allocator would be" \
  bash -c '! out=$(run_probe shutter-probe-no-heap 2>&1) && grep -q "open heap: Operation not permitted" <<< "$out" || { echo "$out"; false; }'
probe_unit shutter-probe-no-netlink -e 's/^RestrictAddressFamilies=.*/RestrictAddressFamilies=AF_UNIX/'
check "without AF_NETLINK udev's socket is refused, libcamera's hot-plug monitor with it" \
  bash -c '! out=$(run_probe shutter-probe-no-netlink 2>&1) && grep -q "socket AF_NETLINK: Address family not supported" <<< "$out" || { echo "$out"; false; }'
probe_unit shutter-probe-no-batch -e '/^SystemCallFilter=sched_setscheduler$/d'
check "without SystemCallFilter=sched_setscheduler the batch policy is refused (EPERM): the encode would preempt subscribers" \
  bash -c '! out=$(run_probe shutter-probe-no-batch 2>&1) && grep -q "sched_setscheduler SCHED_BATCH: Operation not permitted" <<< "$out" || { echo "$out"; false; }'
finish
