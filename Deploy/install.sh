#!/usr/bin/env bash
# install.sh - install shutter as a service on a Raspberry Pi (or any Debian system).
#
#   sudo Deploy/install.sh [--binary PATH] [--no-start] [--hook-network] [--http ADDR:PORT] BOARD
#   Deploy/install.sh --help
#
# Builds a release binary (as the owner of the checkout, so no root-owned build output
# is left behind; --binary PATH installs a binary already built instead), checks the
# board, then installs:
#   /usr/local/bin/shutter                  the binary
#   /usr/local/lib/shutter/libshutter-libcamera.so
#                                           the libcamera backend, a plugin the binary opens
#                                           when the board's camera may be a libcamera one
#                                           (it is built beside the binary, and taken from there)
#   /etc/shutter/board.json                 the board; a copy you edited is kept, and
#                                           the new one goes beside it as board.json.new
#   /usr/local/share/shutter/boards/        the shipped boards (`shutter run` falls back
#                                           to simulator.json there when /etc has none)
#   /etc/udev/rules.d/99-shutter.rules      GPIO chips to group gpio, cameras to video
#   user and group 'shutter' (in gpio, video), /var/lib/shutter; group 'shutter-view'
#                                           (the API: members of shutter control, members of
#                                           shutter-view may only status and follow events:
#                                           usermod -aG shutter-view USER)
#   /etc/systemd/system/shutter.service     enabled and started; restarted on upgrade
#   .../shutter.service.d/photos.conf       ReadWritePaths= and RequiresMountsFor= the
#                                           board's photo directory
# Every step compares before it writes, so a second run changes nothing. Finally it
# checks, as user 'shutter', that the GPIO chips, cameras and photo directory can be
# opened. What was installed is listed in /usr/local/share/shutter/installed-files,
# which Deploy/uninstall.sh reads. --no-start installs without enabling the service.
# --hook-network lets the board's hooks reach the network (an upload hook): the unit allows
# no IP, and hooks run in its sandbox; it installs Deploy/systemd/hook-network.conf as
# .../shutter.service.d/hook-network.conf (IP for the whole service). A run without it
# takes the drop-in away again.
# A board with an `mqtt` section (a multi-camera rig's broker) or an `http` section (live view)
# needs IP: Deploy/systemd/network.conf is installed as .../shutter.service.d/network.conf for
# it, and taken away when the board no longer has either.
# --http ADDR:PORT turns on live view in one step (e.g. --http 0.0.0.0:8080, every address):
# .../shutter.service.d/live-view.conf runs the service with --http ADDR:PORT (made by
# Deploy/systemd/live-view-conf.sh; the board file is not touched), network.conf comes with it,
# the service restarts, and the link with its token and the link's QR code are printed for a
# phone to scan (`sudo shutter link --http ADDR:PORT --token-file /var/lib/shutter/http-token`
# prints them again). A run without --http takes live-view.conf away again. A board with its own
# http section gets its link printed too.
set -euo pipefail
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
binary="" start=yes board="" hook_network=no http="" live_view_conf=""
here=$(dirname "$(readlink -f "$0")")
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --binary) [ $# -ge 2 ] || { echo "install.sh: --binary needs a path" >&2; exit 2; }; binary=$(readlink -f "$2"); shift 2 ;;
    --no-start) start=no; shift ;;
    --hook-network) hook_network=yes; shift ;;
    --http)
      [ $# -ge 2 ] || { echo "install.sh: --http needs ADDR:PORT, e.g. --http 0.0.0.0:8080" >&2; exit 2; }
      http=$2; shift 2
      # Checked (and the drop-in made) before anything else: the address goes into a unit file.
      live_view_conf=$("$here/systemd/live-view-conf.sh" "$http" "$here/systemd/shutter.service" 2>&1) \
        || { echo "install.sh: --http: ${live_view_conf#live-view-conf.sh: }" >&2; exit 2; }
      ;;
    -*) echo "install.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    *) [ -z "$board" ] || { echo "install.sh: one board only (try --help)" >&2; exit 2; }; board=$(readlink -f "$1"); shift ;;
  esac
done
[ -n "$board" ] || { echo "install.sh: which board? e.g. sudo Deploy/install.sh Boards/raspberry-pi-5.json (try --help)" >&2; exit 2; }
[ -f "$board" ] || { echo "install.sh: no board file $board" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "install.sh: run as root (sudo)" >&2; exit 1; }
cd "$here/.."

share=/usr/local/share/shutter
manifest=$share/installed-files
changed=no     # anything the running service depends on
note() { echo "install.sh: $*"; }

# put SOURCE DEST MODE: install only when the content or mode differs.
put() {
  local source=$1 dest=$2 mode=$3
  if [ -f "$dest" ] && cmp -s "$source" "$dest" && [ "$(stat -c %a "$dest")" = "${mode#0}" ]; then
    return 0
  fi
  install -D -m "$mode" "$source" "$dest"
  note "installed $dest"
  changed=yes
}
# put_text DEST MODE TEXT: as put, with TEXT as the content. Called in this shell, never at the
# end of a pipeline (a subshell there would lose changed=yes).
put_text() { local tmp; tmp=$(mktemp); printf '%s\n' "$3" > "$tmp"; put "$tmp" "$1" "$2"; rm -f "$tmp"; }
# put_doc SOURCE DEST: as put, for files the running service never reads (docs, the shared
# boards): installed, but no reason to restart it.
put_doc() { local before=$changed; put "$1" "$2" 0644; changed=$before; }
# output_of BOARD: the board's photo path template, as `shutter check` prints it.
output_of() {
  local out status=0
  out=$(mktemp)
  "$binary" check "$1" > "$out" || status=$?
  [ $status = 0 ] && sed -n 's/^output: //p' "$out"
  rm -f "$out"
  return $status
}

# network_of BOARD: why the board needs IP ("mqtt", "http" or both), empty when it does not.
network_of() {
  local out
  out=$(mktemp)
  "$binary" check "$1" > "$out" 2> /dev/null || true
  sed -n 's/^\(mqtt\|http\): .*/\1/p' "$out" | tr '\n' ' ' | sed 's/ $//'
  rm -f "$out"
}

# ---- the binary -------------------------------------------------------------------
if [ -z "$binary" ]; then
  command -v swift > /dev/null || export PATH=/opt/swift/usr/bin:$PATH
  owner=$(stat -c %U .)
  if [ "$owner" != root ]; then
    # Build as the checkout's owner: a root-owned .build breaks their next `swift build`.
    runuser -u "$owner" -- env PATH="$PATH" HOME="$(getent passwd "$owner" | cut -d: -f6)" swift build -c release
  else
    swift build -c release
  fi
  binary=$PWD/.build/release/shutter
fi
[ -x "$binary" ] || { echo "install.sh: $binary is not an executable" >&2; exit 1; }
output=$(output_of "$board") || exit 1
# The binary finds the plugin in ../lib/shutter from itself (Sources/CLibcameraLoader/loader.c);
# looked for before anything is installed, so a missing one leaves the machine as it was.
plugin=$(dirname "$binary")/libshutter-libcamera.so
[ -f "$plugin" ] || { echo "install.sh: no $plugin: the libcamera backend is built beside the binary (swift build -c release)" >&2; exit 1; }
put "$binary" /usr/local/bin/shutter 0755
put "$plugin" /usr/local/lib/shutter/libshutter-libcamera.so 0644

# ---- shared files -----------------------------------------------------------------
# Read by people and by `shutter run` without a board, never by the service: no restart.
for file in Boards/*.json; do put_doc "$file" "$share/boards/$(basename "$file")"; done
put_doc README.md /usr/local/share/doc/shutter/README.md
put_doc Boards/README.md /usr/local/share/doc/shutter/BOARDS.md

# ---- the board: never overwrite one the user edited ---------------------------------
# $share/board.json.installed is the copy last installed: /etc's differs from it only when edited.
installed_copy=$share/board.json.installed
if [ ! -f /etc/shutter/board.json ]; then
  put "$board" /etc/shutter/board.json 0644
  put "$board" "$installed_copy" 0644
elif cmp -s /etc/shutter/board.json "$board"; then
  put "$board" "$installed_copy" 0644
elif [ -f "$installed_copy" ] && cmp -s /etc/shutter/board.json "$installed_copy"; then
  put "$board" /etc/shutter/board.json 0644      # unedited: upgrade it
  put "$board" "$installed_copy" 0644
else
  if ! cmp -s "$board" /etc/shutter/board.json.new 2>/dev/null; then
    install -m 0644 "$board" /etc/shutter/board.json.new
  fi
  note "NOTE: /etc/shutter/board.json was edited, so it is kept and still used; the board given"
  note "      is beside it as /etc/shutter/board.json.new (compare: diff -u /etc/shutter/board.json{,.new})"
  # The service runs the kept board: its photo directory is the one the drop-in must open.
  output=$(output_of /etc/shutter/board.json) || {
    echo "install.sh: the kept /etc/shutter/board.json is not valid (above): the service would not start with it; fix it, or move it away to install the board given" >&2
    exit 1
  }
fi

# ---- user, groups, udev ---------------------------------------------------------------
for group in gpio video shutter-view; do getent group $group > /dev/null || { groupadd --system $group; note "created group $group"; }; done
if ! id shutter > /dev/null 2>&1; then
  useradd --system --home-dir /var/lib/shutter --no-create-home --shell /usr/sbin/nologin -G gpio,video shutter
  note "created user shutter"
else
  for group in gpio video; do
    id -nG shutter | tr ' ' '\n' | grep -qx $group || { usermod -aG $group shutter; note "added shutter to $group"; }
  done
fi
install -d -o shutter -g shutter -m 0750 /var/lib/shutter
rules_before=$changed; changed=no
put Deploy/udev/99-shutter.rules /etc/udev/rules.d/99-shutter.rules 0644
if [ $changed = yes ]; then
  udevadm control --reload 2> /dev/null && udevadm trigger --subsystem-match=gpio --subsystem-match=video4linux --subsystem-match=media --subsystem-match=dma_heap 2> /dev/null \
    && udevadm settle 2> /dev/null || note "udev is not running: the rule applies from the next boot"
fi
changed=$rules_before

# ---- the photo directory ---------------------------------------------------------------
directory=$(dirname "$output")
case "$directory" in /*) ;; *) directory=/var/lib/shutter/${directory#./} ;; esac
[ -d "$directory" ] || { install -d -o shutter -g shutter -m 0750 "$directory"; note "created $directory"; }
case "$directory" in
  /var/lib/shutter|/var/lib/shutter/*) photos_conf="" ;;
  *) photos_conf="# Written by Deploy/install.sh from the board's output directory.
[Unit]
RequiresMountsFor=$directory

[Service]
ReadWritePaths=$directory" ;;
esac

# ---- systemd --------------------------------------------------------------------------
put Deploy/systemd/shutter.service /etc/systemd/system/shutter.service 0644
if [ -n "$photos_conf" ]; then
  put_text /etc/systemd/system/shutter.service.d/photos.conf 0644 "$photos_conf"
elif [ -f /etc/systemd/system/shutter.service.d/photos.conf ]; then
  rm -f /etc/systemd/system/shutter.service.d/photos.conf; rmdir /etc/systemd/system/shutter.service.d 2> /dev/null || true
  changed=yes
fi

hook_conf=/etc/systemd/system/shutter.service.d/hook-network.conf
if [ $hook_network = yes ]; then
  put Deploy/systemd/hook-network.conf "$hook_conf" 0644
elif [ -f "$hook_conf" ]; then
  rm -f "$hook_conf"; rmdir /etc/systemd/system/shutter.service.d 2> /dev/null || true
  note "removed $hook_conf: hooks have no network again (install with --hook-network to keep it)"
  changed=yes
fi

live_conf=/etc/systemd/system/shutter.service.d/live-view.conf
if [ -n "$http" ]; then
  put_text "$live_conf" 0644 "$live_view_conf"
elif [ -f "$live_conf" ]; then
  rm -f "$live_conf"; rmdir /etc/systemd/system/shutter.service.d 2> /dev/null || true
  note "removed $live_conf: live view is off unless the board has an http section (install with --http ADDR:PORT to keep it)"
  changed=yes
fi

network_conf=/etc/systemd/system/shutter.service.d/network.conf
network_reason=$(network_of /etc/shutter/board.json)
board_http=no
case " $network_reason " in *" http "*) board_http=yes ;; esac
if [ -n "$http" ] && [ $board_http = no ]; then network_reason="${network_reason:+$network_reason }http"; fi
if [ -n "$network_reason" ]; then
  if ! cmp -s Deploy/systemd/network.conf "$network_conf" 2> /dev/null; then
    if [ -n "$http" ] && [ $board_http = no ]; then note "live view (--http $http) needs IP: installing $network_conf"
    else note "the board's $network_reason section needs IP: installing $network_conf"; fi
  fi
  put Deploy/systemd/network.conf "$network_conf" 0644
elif [ -f "$network_conf" ]; then
  rm -f "$network_conf"; rmdir /etc/systemd/system/shutter.service.d 2> /dev/null || true
  note "removed $network_conf: the board has no mqtt or http section, so the service has no IP again"
  changed=yes
fi

# ---- the manifest, for uninstall.sh ---------------------------------------------------
files=$(
  echo /usr/local/bin/shutter
  echo /usr/local/lib/shutter/libshutter-libcamera.so
  for file in Boards/*.json; do echo "$share/boards/$(basename "$file")"; done
  echo /usr/local/share/doc/shutter/README.md
  echo /usr/local/share/doc/shutter/BOARDS.md
  echo "$installed_copy"
  echo /etc/udev/rules.d/99-shutter.rules
  echo /etc/systemd/system/shutter.service
  [ -z "$photos_conf" ] || echo /etc/systemd/system/shutter.service.d/photos.conf
  [ $hook_network = no ] || echo "$hook_conf"
  [ -z "$network_reason" ] || echo "$network_conf"
  [ -z "$http" ] || echo "$live_conf"
)
before=$changed; put_text "$manifest" 0644 "$files"; changed=$before   # the manifest alone is no reason to restart

if [ -d /run/systemd/system ]; then
  [ $changed = no ] || systemctl daemon-reload
  if [ $start = yes ]; then
    if systemctl is-active --quiet shutter; then
      if [ $changed = yes ]; then systemctl restart shutter; note "restarted the running service (upgrade)"; fi
    else
      systemctl enable --now shutter; note "enabled and started shutter"
    fi
    systemctl is-enabled --quiet shutter || { systemctl enable shutter; note "enabled shutter"; }
  fi
else
  note "systemd is not running here: start shutter with 'systemctl enable --now shutter' once it is"
fi

# ---- can the service user reach what it needs? -----------------------------------------
problems=0
as_shutter() { runuser -u shutter -- "$@"; }
for device in /dev/gpiochip* /dev/video* /dev/media* /dev/dma_heap/*; do
  [ -e "$device" ] || continue
  if ! as_shutter test -r "$device" -a -w "$device"; then
    note "WARNING: user shutter cannot open $device ($(stat -c '%U:%G %a' "$device")): the udev rule gives it to group"
    note "         $(case $device in /dev/gpio*) echo gpio;; *) echo video;; esac); replug or reboot if udev has not applied it yet"
    problems=$((problems + 1))
  fi
done
# access(2) as the user, not a probe file: a second run must not touch the directory.
if ! as_shutter test -w "$directory" -a -x "$directory"; then
  echo "install.sh: user shutter cannot write to the photo directory $directory ($(stat -c '%U:%G %a' "$directory")): photos would be lost" >&2
  echo "install.sh: fix it with: sudo chown shutter:shutter '$directory'" >&2
  exit 1
fi
if [ $problems = 0 ]; then note "user shutter can open the GPIO chips and cameras and write to $directory"; fi
if [ $start = yes ] && [ -d /run/systemd/system ]; then note "follow it with: journalctl -u shutter -f"; fi

# ---- live view: the link with its token, and its QR code, for the person installing ----------
if [ -n "$http" ] || [ $board_http = yes ]; then
  link_command=(/usr/local/bin/shutter link --board /etc/shutter/board.json --token-file /var/lib/shutter/http-token)
  [ -z "$http" ] || link_command+=(--http "$http")
  if [ $start = yes ] && [ -d /run/systemd/system ]; then
    # The service makes the token when it first serves live view: a service just restarted may not have yet.
    "${link_command[@]}" --wait 15 || note "no link yet: once the service runs, print it with: sudo ${link_command[*]}"
  else
    note "live view: once the service runs, print its link and QR code with: sudo ${link_command[*]}"
  fi
fi
