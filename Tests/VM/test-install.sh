#!/usr/bin/env bash
# Deploy/install.sh and Deploy/uninstall.sh in the guest, whose writes vanish at power-off:
# a binary without the libcamera plugin beside it refused before anything is installed,
# a first install, a second that changes nothing, a README change that restarts nothing, the
# board check's output in a mktemp file, an edited board kept and used (its photo directory in
# the drop-in, then daemon-reload and a restart), an upgrade that restarts the service, no
# root-owned build output, access checked as user shutter, uninstall keeping the photos, and
# --purge after a plain uninstall, --hook-network's drop-in, --http's live view. systemd is not PID 1 in the guest: a stub systemctl
# records what install.sh asks of it. Not GPIO behaviour: run once (VM_SKIP for 2.x).
set -u
here=$(dirname "$(readlink -f "$0")")
. "$here/lib.sh"
: "${SHUTTER:?set SHUTTER to the shutter binary}"
repo=$(readlink -f "$here/../..")
work=$(mktemp -d)
chmod 755 "$work"
mkdir -p "$work/bin" /run/systemd/system
cat > "$work/bin/systemctl" <<STUB
#!/bin/bash
echo "systemctl \$*" >> $work/systemctl.log
case "\$*" in
  "is-active --quiet shutter") [ -f $work/active ] ;;
  "is-enabled --quiet shutter") [ -f $work/enabled ] ;;
  "enable --now shutter") touch $work/active $work/enabled ;;
  "enable shutter") touch $work/enabled ;;
  "disable --now shutter") rm -f $work/active $work/enabled ;;
esac
STUB
chmod 755 "$work/bin/systemctl"
export PATH=$work/bin:$PATH
snapshot() { find /usr/local/bin/shutter /usr/local/lib/shutter /usr/local/share/shutter /usr/local/share/doc/shutter /etc/shutter /etc/udev/rules.d/99-shutter.rules \
  /etc/systemd/system/shutter.service* /var/lib/shutter -printf '%p %s %T@ %m %u\n' 2> /dev/null | sort; }

# --- a binary without the libcamera plugin beside it is refused before anything is installed ---
# install.sh once copied the binary first and refused after, leaving a shutter that could not
# open a camera module: every file it would touch (the binary first) and the user must be as before.
mkdir "$work/lone" && cp "$SHUTTER" "$work/lone/shutter"
before=$(snapshot); user_before=$(id shutter 2>&1)
"$repo/Deploy/install.sh" --binary "$work/lone/shutter" "$repo/Boards/gpio-sim.json" > "$work/lone.out" 2>&1; status=$?
after=$(snapshot)
check "a binary without libshutter-libcamera.so beside it: install.sh exits non-zero (got $status), naming the file: $(head -1 "$work/lone.out")" \
  bash -c "[ $status != 0 ] && grep -q 'no $work/lone/libshutter-libcamera.so' '$work/lone.out'"
check "... and installs nothing: /usr/local/bin/shutter and every other file as before ($(echo "$after" | grep -c .) there), no 'installed' line, no systemctl call, no user made" \
  bash -c "[ \"\$1\" = \"\$2\" ] && ! grep -q 'installed /' '$work/lone.out' && [ ! -s '$work/systemctl.log' ] && [ \"\$(id shutter 2>&1)\" = \"\$3\" ]" \
  _ "$before" "$after" "$user_before"

# --- first install ---
"$repo/Deploy/install.sh" --binary "$SHUTTER" "$repo/Boards/gpio-sim.json" > "$work/first.out" 2>&1; status=$?
check "first install exits 0 (got $status)" [ "$status" = 0 ]
grep -E 'WARNING|shutter can|error' "$work/first.out" | sed 's/^/#   /' 
check "the binary, libcamera plugin, board, shared simulator board, udev rule and unit are installed" \
  test -x /usr/local/bin/shutter -a -f /usr/local/lib/shutter/libshutter-libcamera.so -a -f /etc/shutter/board.json -a -f /usr/local/share/shutter/boards/simulator.json \
    -a -f /etc/udev/rules.d/99-shutter.rules -a -f /etc/systemd/system/shutter.service
check "user shutter exists, in groups gpio and video" bash -c "id -nG shutter | grep -qw gpio && id -nG shutter | grep -qw video"
check "group shutter-view exists (the API's watchers), and the unit gives it to --view-group" \
  bash -c "getent group shutter-view > /dev/null && grep -q -- '--control-group shutter --view-group shutter-view' /etc/systemd/system/shutter.service"
check "the photo directory /var/lib/shutter/photos belongs to shutter" [ "$(stat -c %U /var/lib/shutter/photos 2>/dev/null)" = shutter ]
check "the service was enabled and started" grep -qx "systemctl enable --now shutter" "$work/systemctl.log"
# No udev runs in the guest, so the devices are still root's: the check must say so.
check "access checked as user shutter: a chip it cannot open is named with its group: $(grep -m1 'gpiochip' "$work/first.out")" \
  grep -q "WARNING: user shutter cannot open /dev/$GPIOCHIP (root:root 600)" "$work/first.out"

# --- once the devices are the groups' (what the udev rule does), the check passes ---
chgrp gpio /dev/gpiochip*; chgrp video /dev/video* /dev/media*; chmod 660 /dev/gpiochip* /dev/video* /dev/media*
"$repo/Deploy/install.sh" --binary "$SHUTTER" "$repo/Boards/gpio-sim.json" > "$work/access.out" 2>&1
check "with the rule applied: $(grep -m1 'shutter can' "$work/access.out")" \
  grep -q "user shutter can open the GPIO chips and cameras and write to /var/lib/shutter/photos" "$work/access.out"

# --- a second run changes nothing ---
before=$(snapshot); : > "$work/systemctl.log"
sleep 1.1
"$repo/Deploy/install.sh" --binary "$SHUTTER" "$repo/Boards/gpio-sim.json" > "$work/second.out" 2>&1; status=$?
check "second install exits 0 (got $status)" [ "$status" = 0 ]
check "second install writes nothing (no 'installed' line)" bash -c "! grep -q 'installed /' '$work/second.out'"
check "second install: every installed file has the same size, time, mode and owner" [ "$before" = "$(snapshot)" ]
check "second install neither restarts nor reloads: $(tr '\n' ';' < "$work/systemctl.log")" \
  bash -c "! grep -qE '^systemctl (restart|daemon-reload|enable)' '$work/systemctl.log'"

# --- a documentation change is installed, and restarts nothing ---
mkdir -p "$work/docs" && cp -r "$repo/Deploy" "$repo/Boards" "$repo/README.md" "$work/docs/" && echo "A new note." >> "$work/docs/README.md"
: > "$work/systemctl.log"
"$work/docs/Deploy/install.sh" --binary "$SHUTTER" "$repo/Boards/gpio-sim.json" > "$work/docs.out" 2>&1; status=$?
check "a README change is installed (exit $status) but neither restarts nor reloads: $(tr '\n' ';' < "$work/systemctl.log")" \
  bash -c "[ $status = 0 ] && grep -q 'installed /usr/local/share/doc/shutter/README.md' '$work/docs.out' \
    && ! grep -qE '^systemctl (restart|daemon-reload)' '$work/systemctl.log'"

# --- the board check's output goes to a file of mktemp's, not a name anyone can guess ---
cat > "$work/shutter-probe" <<PROBE
#!/bin/bash
[ "\$1" = check ] && readlink /proc/\$\$/fd/1 >> $work/check-stdout
exec $SHUTTER "\$@"
PROBE
chmod 755 "$work/shutter-probe"; mkdir -p "$work/tmp"
cp "$(dirname "$SHUTTER")/libshutter-libcamera.so" "$work/"   # install.sh takes it from beside the binary
TMPDIR=$work/tmp "$repo/Deploy/install.sh" --binary "$work/shutter-probe" "$repo/Boards/gpio-sim.json" > "$work/probe.out" 2>&1; status=$?
check "the board check writes to a mktemp file in \$TMPDIR (exit $status): $(tr '\n' ' ' < "$work/check-stdout" 2>/dev/null)" \
  bash -c "[ $status = 0 ] && [ -s '$work/check-stdout' ] && ! grep -qv '^$work/tmp/tmp\.' '$work/check-stdout'"

# --- an edited board is kept, the new one goes beside it ---
sed -i 's/"description": "[^"]*"/"description": "edited by the rig builder"/' /etc/shutter/board.json
sed 's/"name": "gpio-sim"/"name": "gpio-sim-v2"/' "$repo/Boards/gpio-sim.json" > "$work/v2.json"
"$repo/Deploy/install.sh" --binary "$SHUTTER" "$work/v2.json" > "$work/edited.out" 2>&1; status=$?
check "install over an edited board exits 0 (got $status)" [ "$status" = 0 ]
check "the edited board is kept" grep -q "edited by the rig builder" /etc/shutter/board.json
check "the new board is beside it as board.json.new, with a note" \
  bash -c "grep -q gpio-sim-v2 /etc/shutter/board.json.new && grep -q 'board.json.new' '$work/edited.out'"

# --- the edited board is the one used: the photo drop-in follows its output directory ---
sed -i 's|"directory": "photos"|"directory": "/srv/edited-photos"|' /etc/shutter/board.json
: > "$work/systemctl.log"
"$repo/Deploy/install.sh" --binary "$SHUTTER" "$work/v2.json" > "$work/edited-output.out" 2>&1; status=$?
check "an edited board with photos in /srv/edited-photos: exit $status, the drop-in names that directory: $(grep -h ReadWritePaths /etc/systemd/system/shutter.service.d/photos.conf 2>/dev/null)" \
  bash -c "[ $status = 0 ] && grep -qx 'ReadWritePaths=/srv/edited-photos' /etc/systemd/system/shutter.service.d/photos.conf \
    && [ \$(stat -c %U /srv/edited-photos) = shutter ]"
check "a new drop-in alone is followed by daemon-reload and a restart: $(tr '\n' ';' < "$work/systemctl.log")" \
  bash -c "grep -qx 'systemctl daemon-reload' '$work/systemctl.log' && grep -qx 'systemctl restart shutter' '$work/systemctl.log'"

# --- an upgrade restarts the running service ---
mkdir "$work/upgrade" && cp "$SHUTTER" "$work/upgrade/shutter" && printf 'upgrade' >> "$work/upgrade/shutter"
cp "$(dirname "$SHUTTER")/libshutter-libcamera.so" "$work/upgrade/"
: > "$work/systemctl.log"
"$repo/Deploy/install.sh" --binary "$work/upgrade/shutter" "$repo/Boards/gpio-sim.json" > "$work/upgrade.out" 2>&1; status=$?
check "upgrade exits 0 and restarts the running service: $(tr '\n' ';' < "$work/systemctl.log")" \
  bash -c "[ $status = 0 ] && grep -qx 'systemctl daemon-reload' '$work/systemctl.log' && grep -qx 'systemctl restart shutter' '$work/systemctl.log'"

# --- photos on another mount: the unit gets ReadWritePaths= and RequiresMountsFor= ---
sed 's|"directory": "photos"|"directory": "/srv/rig-photos"|' "$repo/Boards/gpio-sim.json" > "$work/usb.json"
cp "$work/usb.json" /etc/shutter/board.json.new; rm -f /etc/shutter/board.json; cp /usr/local/share/shutter/board.json.installed /etc/shutter/board.json
"$repo/Deploy/install.sh" --binary "$work/upgrade/shutter" "$work/usb.json" > "$work/usb.out" 2>&1; status=$?
check "a board with photos in /srv/rig-photos: exit 0, directory created for shutter (got $status)" \
  bash -c "[ $status = 0 ] && [ \$(stat -c %U /srv/rig-photos) = shutter ]"
check "the drop-in names the photo directory in ReadWritePaths= and RequiresMountsFor=" \
  bash -c "grep -qx 'ReadWritePaths=/srv/rig-photos' /etc/systemd/system/shutter.service.d/photos.conf && grep -qx 'RequiresMountsFor=/srv/rig-photos' /etc/systemd/system/shutter.service.d/photos.conf"

# --- --hook-network: the hooks' network, as a drop-in of its own; a run without it takes it away ---
conf=/etc/systemd/system/shutter.service.d/hook-network.conf
: > "$work/systemctl.log"
"$repo/Deploy/install.sh" --binary "$work/upgrade/shutter" --hook-network "$work/usb.json" > "$work/network.out" 2>&1; status=$?
check "--hook-network installs hook-network.conf (IP allowed), then daemon-reload and a restart: exit $status, $(tr '\n' ';' < "$work/systemctl.log")" \
  bash -c "[ $status = 0 ] && cmp -s '$repo/Deploy/systemd/hook-network.conf' $conf && grep -qx 'RestrictAddressFamilies=AF_INET AF_INET6' $conf \
    && grep -qx 'systemctl daemon-reload' '$work/systemctl.log' && grep -qx 'systemctl restart shutter' '$work/systemctl.log' \
    && grep -qx $conf /usr/local/share/shutter/installed-files && [ -f /etc/systemd/system/shutter.service.d/photos.conf ]"
: > "$work/systemctl.log"
"$repo/Deploy/install.sh" --binary "$work/upgrade/shutter" --hook-network "$work/usb.json" > /dev/null 2>&1
check "--hook-network again changes nothing: $(tr '\n' ';' < "$work/systemctl.log")" bash -c "! grep -qE '^systemctl (restart|daemon-reload)' '$work/systemctl.log'"
: > "$work/systemctl.log"
"$repo/Deploy/install.sh" --binary "$work/upgrade/shutter" "$work/usb.json" > "$work/no-network.out" 2>&1; status=$?
check "without --hook-network the drop-in goes, with a note, daemon-reload and a restart: exit $status, $(grep -m1 'hook-network' "$work/no-network.out")" \
  bash -c "[ $status = 0 ] && [ ! -e $conf ] && grep -q 'hooks have no network again' '$work/no-network.out' \
    && grep -qx 'systemctl restart shutter' '$work/systemctl.log' && ! grep -q hook-network /usr/local/share/shutter/installed-files"

# --- a board with an mqtt section (or http) gets IP through network.conf; without it, none again ---
conf=/etc/systemd/system/shutter.service.d/network.conf
python3 -c 'import json, sys; b = json.load(open(sys.argv[1])); b["mqtt"] = {"host": "192.0.2.10", "rig": "scanner"}; json.dump(b, open(sys.argv[2], "w"))' \
  "$work/usb.json" "$work/rig.json"
cp "$work/rig.json" /etc/shutter/board.json.new; rm -f /etc/shutter/board.json; cp /usr/local/share/shutter/board.json.installed /etc/shutter/board.json
: > "$work/systemctl.log"
"$repo/Deploy/install.sh" --binary "$work/upgrade/shutter" "$work/rig.json" > "$work/rig.out" 2>&1; status=$?
check "a board with an mqtt section installs network.conf (IP allowed), says why, restarts: exit $status, $(grep -m1 'needs IP' "$work/rig.out")" \
  bash -c "[ $status = 0 ] && cmp -s '$repo/Deploy/systemd/network.conf' $conf && grep -q 'mqtt section needs IP' '$work/rig.out' \
    && grep -qx 'systemctl restart shutter' '$work/systemctl.log' && grep -qx $conf /usr/local/share/shutter/installed-files"
cp "$work/usb.json" /etc/shutter/board.json.new; rm -f /etc/shutter/board.json; cp /usr/local/share/shutter/board.json.installed /etc/shutter/board.json
"$repo/Deploy/install.sh" --binary "$work/upgrade/shutter" "$work/usb.json" > "$work/norig.out" 2>&1; status=$?
check "the same board without mqtt takes network.conf away, with a note: exit $status" \
  bash -c "[ $status = 0 ] && [ ! -e $conf ] && grep -q 'has no IP again' '$work/norig.out' && ! grep -q network.conf /usr/local/share/shutter/installed-files"

# --- --http: live view in one step: the drop-in, IP, a restart, the link with its token printed ---
conf=/etc/systemd/system/shutter.service.d/live-view.conf
# The token the service would have made on its first start with live view (no daemon runs here).
install -o shutter -g shutter -m 0600 /dev/null /var/lib/shutter/http-token
echo 0123456789abcdef0123456789abcdef > /var/lib/shutter/http-token
: > "$work/systemctl.log"
"$repo/Deploy/install.sh" --binary "$work/upgrade/shutter" --http 0.0.0.0:8080 "$work/usb.json" > "$work/http.out" 2>&1; status=$?
check "--http 0.0.0.0:8080 installs live-view.conf (the unit's command line with --http) and network.conf, restarts, prints the link with the token: exit $status, $(grep -m1 'live view:' "$work/http.out")" \
  bash -c "[ $status = 0 ] && grep -q -- '^ExecStart=/usr/local/bin/shutter run .* --http 0.0.0.0:8080\$' $conf && [ -f /etc/systemd/system/shutter.service.d/network.conf ] \
    && grep -qx 'systemctl restart shutter' '$work/systemctl.log' && grep -q ':8080/?token=0123456789abcdef0123456789abcdef' '$work/http.out' \
    && grep -qx $conf /usr/local/share/shutter/installed-files"
"$repo/Deploy/install.sh" --binary "$work/upgrade/shutter" "$work/usb.json" > "$work/nohttp.out" 2>&1; status=$?
check "without --http live-view.conf and network.conf go again, with a note: exit $status" \
  bash -c "[ $status = 0 ] && [ ! -e $conf ] && [ ! -e /etc/systemd/system/shutter.service.d/network.conf ] && grep -q 'live view is off' '$work/nohttp.out'"

# --- a photo directory shutter cannot write is an error naming it ---
chown root:root /srv/rig-photos && chmod 755 /srv/rig-photos
"$repo/Deploy/install.sh" --binary "$work/upgrade/shutter" "$work/usb.json" > "$work/denied.out" 2>&1; status=$?
check "an unwritable photo directory: exit 1, named, with the fix: $(grep -m1 'cannot write' "$work/denied.out")" \
  bash -c "[ $status = 1 ] && grep -q 'cannot write to the photo directory /srv/rig-photos' '$work/denied.out'"
chown shutter:shutter /srv/rig-photos

# --- building leaves no root-owned output in the checkout ---
useradd --create-home builder
mkdir -p "$work/checkout" && cp -r "$repo/Deploy" "$repo/Boards" "$repo/README.md" "$work/checkout/" && chown -R builder: "$work/checkout"
mkdir -p "$work/fake-swift"
# The builder cannot read $SHUTTER where the checkout under test lies in a directory only root
# may enter (a root clone in /root, or CI's): the fake build copies a copy the builder can read.
install -m 755 "$SHUTTER" "$work/fake-swift/shutter"
install -m 644 "$(dirname "$SHUTTER")/libshutter-libcamera.so" "$work/fake-swift/"
printf '#!/bin/bash\nmkdir -p .build/release && cp %q %q .build/release/\n' "$work/fake-swift/shutter" "$work/fake-swift/libshutter-libcamera.so" > "$work/fake-swift/swift"
chmod 755 "$work/fake-swift/swift"
PATH=$work/fake-swift:$PATH "$work/checkout/Deploy/install.sh" "$repo/Boards/gpio-sim.json" > "$work/build.out" 2>&1; status=$?
root_owned=$(find "$work/checkout" -user root | head -3)
check "install.sh run as root builds as the checkout's owner: exit 0, nothing root-owned (${root_owned:-none})" \
  bash -c "[ $status = 0 ] && [ -z '$root_owned' ] && [ -x '$work/checkout/.build/release/shutter' ]"

# --- uninstall: removes what was installed, keeps photos ---
sed -i 's/"description": "[^"]*"/"description": "edited before the uninstall"/' /etc/shutter/board.json
echo photo > /var/lib/shutter/photos/IMG_1.jpg; echo photo > /srv/rig-photos/IMG_2.jpg
"$repo/Deploy/uninstall.sh" > "$work/uninstall.out" 2>&1; status=$?
check "uninstall exits 0 (got $status)" [ "$status" = 0 ]
left=$(ls -d /usr/local/bin/shutter /usr/local/lib/shutter /usr/local/share/shutter /usr/local/share/doc/shutter /etc/udev/rules.d/99-shutter.rules /etc/systemd/system/shutter.service* 2>/dev/null)
check "uninstall removes the binary, plugin, shared files, udev rule and unit (left: ${left:-nothing})" [ -z "$left" ]
check "uninstall keeps the photos" test -f /var/lib/shutter/photos/IMG_1.jpg -a -f /srv/rig-photos/IMG_2.jpg
check "uninstall disables the service" grep -qx "systemctl disable --now shutter" "$work/systemctl.log"
"$repo/Deploy/uninstall.sh" > /dev/null 2>&1; status=$?
check "a second uninstall is a no-op with exit 0 (got $status)" [ "$status" = 0 ]
check "the edited board was kept by the plain uninstall" grep -q "edited before the uninstall" /etc/shutter/board.json
"$repo/Deploy/uninstall.sh" --purge > "$work/purge.out" 2>&1; status=$?
check "uninstall --purge after a plain uninstall still purges: exit $status, user shutter and /etc/shutter gone, photos kept: $(tail -n 1 "$work/purge.out")" \
  bash -c "[ $status = 0 ] && ! id shutter > /dev/null 2>&1 && [ ! -e /etc/shutter ] && [ -f /var/lib/shutter/photos/IMG_1.jpg ]"
check "uninstall --purge removes group shutter-view" bash -c "! getent group shutter-view > /dev/null"
finish
