#!/usr/bin/env bash
# test-netns.sh - a rig on a poor network (issue 22): three nodes, each in a network namespace of
# its own, with a veth pair to a namespace holding the broker; tc netem gives one link 40 ms ± 30 ms
# of delay and 2 % loss, and cuts another for 10 s mid-session.
#
#   Tests/MQTT/test-netns.sh [--plumbing]          on the host: boots the VM harness
#                                                  (Deploy/vm/run-in-vm.sh) and runs itself there
#   Tests/MQTT/test-netns.sh --here [--plumbing]   in this kernel (needs root, veth, sch_netem)
#   Tests/MQTT/test-netns.sh --help
#
# The host kernel of the CI machines has no sch_netem (CONFIG_NET_SCH_NETEM is unset), so by
# default the test runs in a qemu guest booted with Debian's kernel, whose modules (veth,
# sch_netem) are loaded there; the guest's / is the host's, so mosquitto, iproute2, python3 and
# the host-built shutter run unchanged. Addresses: 10.231.N.1 (the broker's end of node N's link)
# and 10.231.N.2 (the node's), only inside the namespaces the test makes and deletes.
#
# --plumbing proves the network alone (no shutter needed): namespaces, veth pairs, netem, the
# broker reachable from every node, a mosquitto_pub/sub round trip with its delay measured on
# the clean and the poor link, a cut link that delivers nothing and recovers.
# Without --plumbing the daemons run too (SHUTTER, default .build/debug/shutter, with the MQTT
# client): every shot takes, on every reachable node, the frame of the pressed instant (spread
# within one frame interval of the synthetic camera), the cut node answers the shots its ring
# still holds and `missed` for the rest, nothing is taken twice. A shutter without MQTT: the
# daemon part is skipped, said on a "skip -" line.
#
# One line per check ("ok - ..." / "FAIL - ..."), then "mqtt: N passed, M failed"; exit 1 on a failure.
# Without root (--here): skipped with a message, exit 0 (the VM runs the guest as root).
set -uo pipefail
here=$(dirname "$(readlink -f "$0")")
root=$(readlink -f "$here/../..")

mode=vm plumbing=()
while [ $# -gt 0 ]; do
  case "$1" in
    --here) mode=here ;;
    --plumbing) plumbing=(--plumbing) ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "test-netns.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done

shutter=$(readlink -f "${SHUTTER:-$root/.build/debug/shutter}")
python=/usr/bin/python3; [ -x "$python" ] || python=python3

if [ "$mode" = vm ]; then
  # The guest runs this script with --here, as root, in this checkout (the share).
  cd "$root" || exit 1
  exec "$root/Deploy/vm/run-in-vm.sh" --timeout "${VM_TIMEOUT:-1500}" -- \
    env SHUTTER="$shutter" bash "$here/test-netns.sh" --here "${plumbing[@]}"
fi

if [ "$(id -u)" != 0 ]; then
  echo "skip - test-netns.sh --here needs root (network namespaces, veth, tc); run it without --here to use the VM"
  echo "mqtt: 0 passed, 0 failed"
  exit 0
fi
# In the guest: loopback is down at boot, and the modules are not loaded.
ip link set lo up 2> /dev/null
for module in veth sch_netem; do
  modprobe "$module" 2> /dev/null || true
done
exec "$python" "$here/netns.py" "${plumbing[@]}"
