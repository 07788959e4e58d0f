#!/usr/bin/env bash
# uninstall.sh - remove what Deploy/install.sh installed; photos are kept.
#
#   sudo Deploy/uninstall.sh [--purge]
#   Deploy/uninstall.sh --help
#
# Stops and disables the service, then removes every file listed in
# /usr/local/share/shutter/installed-files (binary, libcamera plugin, shared boards, docs, udev rule,
# unit and its drop-in), the saved control values and /etc/shutter/board.json when it
# is the one installed. Kept: the photos (by default under /var/lib/shutter/photos), a
# board.json you edited, the user 'shutter' (it owns the photos). --purge also removes
# /etc/shutter, the user and group 'shutter' and the group 'shutter-view' (also after a plain uninstall: run it then to
# finish the job); photos stay, owned by their numeric uid.
set -euo pipefail
purge=no
case "${1:-}" in
  -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
  --purge) purge=yes ;;
  "") ;;
  *) echo "uninstall.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
esac
[ "$(id -u)" = 0 ] || { echo "uninstall.sh: run as root (sudo)" >&2; exit 1; }
share=/usr/local/share/shutter
manifest=$share/installed-files
note() { echo "uninstall.sh: $*"; }
if [ -f "$manifest" ]; then
  if [ -d /run/systemd/system ]; then
    systemctl disable --now shutter 2> /dev/null || true
  fi
  # The board goes only when it is the copy install.sh put there.
  if [ -f /etc/shutter/board.json ] && cmp -s /etc/shutter/board.json "$share/board.json.installed"; then
    rm -f /etc/shutter/board.json
  fi
  rm -f /etc/shutter/board.json.new
  while read -r file; do
    case "$file" in /usr/local/*|/etc/udev/rules.d/99-shutter.rules|/etc/systemd/system/shutter.service*) ;; *) continue ;; esac
    [ -e "$file" ] && rm -f "$file" && note "removed $file"
  done < "$manifest"
  rm -f "$manifest"
  for directory in $share/boards $share /usr/local/lib/shutter /usr/local/share/doc/shutter /etc/systemd/system/shutter.service.d /etc/shutter; do
    rmdir "$directory" 2> /dev/null || true
  done
  rm -f /var/lib/shutter/*.controls.json
  [ -d /run/systemd/system ] && systemctl daemon-reload
  udevadm control --reload 2> /dev/null || true
elif [ $purge = no ]; then
  note "nothing to do: $manifest is missing (shutter is not installed, or was installed another way)"
  exit 0
else
  # Uninstalled before: what --purge adds (the kept board, the user) is still to remove.
  note "$manifest is missing (uninstalled already): purging what an uninstall keeps"
fi
if [ $purge = yes ]; then
  rm -rf /etc/shutter
  if id shutter > /dev/null 2>&1; then userdel shutter && note "removed user shutter"; fi
  getent group shutter > /dev/null && groupdel shutter 2> /dev/null || true
  getent group shutter-view > /dev/null && groupdel shutter-view && note "removed group shutter-view" || true
fi
[ -d /etc/shutter ] && note "kept /etc/shutter (your edited board)"
photos=$(find /var/lib/shutter -type f 2> /dev/null | wc -l)
[ "$photos" = 0 ] || note "kept $photos files under /var/lib/shutter (your photos)"
note "done"
