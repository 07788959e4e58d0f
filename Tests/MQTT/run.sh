#!/bin/sh
# run.sh - the MQTT broker tests on the host (issue 22), what the CI stage runs:
#   1. Tests/MQTT/rig.py selftest        the broker plumbing (mosquitto, pub/sub, restart)
#   2. Tests/MQTT/test-rig.py            three daemons and a loopback broker: the Proven list
#   3. Tests/MQTT/bench-scale.py --nodes 5 --shots 3   the scale bench, short
# All on 127.0.0.1. The poor-network test needs netem, so a VM: Tests/MQTT/test-netns.sh.
#
#   SHUTTER=.build/debug/shutter Tests/MQTT/run.sh
#   Tests/MQTT/run.sh --help
#
# Builds nothing: SHUTTER (default .build/debug/shutter) must be built. Without mosquitto or
# mosquitto-clients it skips (exit 0) on a workstation, and fails under CI (CI set). Each part
# prints one line per check and "mqtt: N passed, M failed"; the last line sums them up.
set -u
case "${1:-}" in
  -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
  "") ;;
  *) echo "run.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/../.."
SHUTTER="${SHUTTER:-.build/debug/shutter}"
export SHUTTER
python=/usr/bin/python3; [ -x "$python" ] || python=python3

missing=""
[ -x /usr/sbin/mosquitto ] || command -v mosquitto > /dev/null || missing="$missing mosquitto"
command -v mosquitto_sub > /dev/null || missing="$missing mosquitto-clients"
if [ -n "$missing" ]; then
  if [ -z "${CI:-}" ]; then
    echo "skip - mqtt: not installed:$missing (sudo apt-get install -y mosquitto mosquitto-clients)"
    exit 0
  fi
  echo "mqtt: not installed under CI:$missing" >&2
  exit 1
fi

out=$(mktemp)
trap 'rm -f "$out"' EXIT
status=0
for part in "Tests/MQTT/rig.py selftest" "Tests/MQTT/test-rig.py" "Tests/MQTT/bench-scale.py --nodes 5 --shots 3"; do
  echo "=== $part"
  # shellcheck disable=SC2086
  { "$python" $part; echo $? > "$out.rc"; } | tee -a "$out"
  [ "$(cat "$out.rc")" = 0 ] || status=1
done
rm -f "$out.rc"
awk '/^mqtt: [0-9]+ passed, [0-9]+ failed/ { p += $2; f += $4 } END { printf "mqtt: %d passed, %d failed\n", p, f }' "$out"
exit $status
