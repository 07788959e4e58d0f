#!/usr/bin/env bash
# live-view-conf.sh - print the drop-in that turns on live view for the installed service.
#
#   Deploy/systemd/live-view-conf.sh ADDR:PORT [UNIT]
#   Deploy/systemd/live-view-conf.sh --help
#
# Deploy/install.sh --http ADDR:PORT installs what this prints as
# /etc/systemd/system/shutter.service.d/live-view.conf: the unit's own command line (UNIT,
# default Deploy/systemd/shutter.service beside this script) with --http ADDR:PORT added, so
# the board file stays as it was installed. ADDR is a numeric IPv4 address (0.0.0.0: every
# one) or an IPv6 one in brackets ([::]); PORT 1 to 65535. Anything else is refused (exit 2)
# before a line is printed: what is printed goes into a unit file.
set -euo pipefail
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
case "${1:-}" in -h|--help) usage; exit 0 ;; esac
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "live-view-conf.sh: give ADDR:PORT (try --help)" >&2; exit 2; }
endpoint=$1
unit=${2:-$(dirname "$(readlink -f "$0")")/shutter.service}
ipv4='(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])'
if [[ $endpoint =~ ^($ipv4\.$ipv4\.$ipv4\.$ipv4|\[[0-9a-fA-F:.]+\]):([0-9]{1,5})$ ]]; then
  port=${BASH_REMATCH[${#BASH_REMATCH[@]} - 1]}
else
  port=""
fi
if [ -z "$port" ] || [ "$((10#$port))" -lt 1 ] || [ "$((10#$port))" -gt 65535 ]; then
  echo "live-view-conf.sh: '$endpoint' is not ADDR:PORT with a numeric address (0.0.0.0:8080, 192.168.1.20:8080, [::]:8080)" >&2
  exit 2
fi
exec_start=$(sed -n 's/^ExecStart=//p' "$unit" | tail -n 1)
[ -n "$exec_start" ] || { echo "live-view-conf.sh: no ExecStart= in $unit" >&2; exit 1; }
cat <<CONF
# shutter.service.d/live-view.conf: live view over HTTP on $endpoint, written by
# Deploy/install.sh --http $endpoint (a run without --http takes it away again): the unit's
# command line with --http added (the empty ExecStart= replaces the unit's rather than adding a
# second). network.conf beside it allows IP. The link with its token, and its QR code:
#   sudo shutter link --http $endpoint --token-file /var/lib/shutter/http-token
[Service]
ExecStart=
ExecStart=$exec_start --http $endpoint
CONF
