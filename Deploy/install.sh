#!/usr/bin/env bash
# install.sh - install shutter as a service on a Raspberry Pi (or any Debian system).
#
#   sudo Deploy/install.sh BOARD     e.g. sudo Deploy/install.sh Boards/raspberry-pi-5.json
#   Deploy/install.sh --help
#
# Builds a release binary, then installs: /usr/local/bin/shutter, the board as
# /etc/shutter/board.json (checked first), the udev rule (gpio and video groups),
# a 'shutter' system user in those groups, and the systemd unit, enabled and started.
set -euo pipefail
case "${1:-}" in
  -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
  "") echo "install.sh: which board? (try --help)" >&2; exit 2 ;;
esac
board=$1
[ "$(id -u)" = 0 ] || { echo "install.sh: run as root (sudo)" >&2; exit 1; }
cd "$(dirname "$(readlink -f "$0")")/.."
export PATH=/opt/swift/usr/bin:$PATH
swift build -c release
.build/release/shutter check "$board"
install -m 0755 .build/release/shutter /usr/local/bin/shutter
install -d /etc/shutter /usr/local/share/doc/shutter
install -m 0644 "$board" /etc/shutter/board.json
install -m 0644 README.md /usr/local/share/doc/shutter/README.md
install -m 0644 Deploy/udev/99-shutter.rules /etc/udev/rules.d/99-shutter.rules
getent group gpio >/dev/null || groupadd --system gpio
getent group video >/dev/null || groupadd --system video
id shutter >/dev/null 2>&1 || useradd --system --home /var/lib/shutter --shell /usr/sbin/nologin -G gpio,video shutter
udevadm control --reload && udevadm trigger --subsystem-match=gpio --subsystem-match=video4linux || true
install -m 0644 Deploy/systemd/shutter.service /etc/systemd/system/shutter.service
systemctl daemon-reload
systemctl enable --now shutter
echo "install.sh: shutter is running; follow it with: journalctl -u shutter -f"
