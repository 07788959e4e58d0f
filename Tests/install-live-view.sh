#!/usr/bin/env bash
# install-live-view.sh - Deploy/install.sh --http on the host, without installing anything:
# the option's checks (refused before the root check, so nothing is written even as root), the
# drop-in Deploy/systemd/live-view-conf.sh makes (the unit's own command line with --http,
# verified with systemd-analyze against the unit), and the link `shutter link` prints for it.
# What install.sh then does as root (the drop-in installed, network.conf, the restart, the
# link printed) is Tests/VM/test-install.sh's, in the guest.
#
#   SHUTTER=.build/debug/shutter Tests/install-live-view.sh
set -u
here=$(dirname "$(readlink -f "$0")")
. "$here/VM/lib.sh"
repo=$(readlink -f "$here/..")
SHUTTER=$(readlink -f "${SHUTTER:-$repo/.build/debug/shutter}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
board=$repo/Boards/simulator.json

# --- install.sh refuses a bad --http before anything else (every call here must exit 2) ---
# Should a check ever let one through, install.sh must still stop at its root check, not
# install on this machine: `id` says nobody to it.
mkdir -p "$work/bin"
printf '#!/bin/sh\necho 65534\n' > "$work/bin/id"; chmod 755 "$work/bin/id"
install_sh() { PATH="$work/bin:$PATH" "$repo/Deploy/install.sh" "$@"; }
install_sh --help > "$work/help.out" 2>&1
check "install.sh --help offers --http ADDR:PORT" grep -q -- '--http ADDR:PORT' "$work/help.out"
install_sh --http > "$work/none.out" 2>&1; status=$?
check "--http without an address: exit 2 (got $status), saying what it needs: $(head -1 "$work/none.out")" \
  bash -c "[ $status = 2 ] && grep -q 'needs ADDR:PORT' '$work/none.out'"
for bad in 'rig.local:8080' '0.0.0.0' '0.0.0.0:0' '0.0.0.0:70000' '256.1.1.1:80' $'0.0.0.0:8080\nExecStartPre=/bin/sh' '0.0.0.0:8080 --no-state'; do
  install_sh --http "$bad" "$board" > "$work/bad.out" 2>&1; status=$?
  check "--http $(printf %q "$bad") is refused with exit 2 (got $status) before anything is done: $(head -1 "$work/bad.out")" \
    bash -c "[ $status = 2 ] && grep -q 'is not ADDR:PORT' '$work/bad.out' && ! grep -q 'installed' '$work/bad.out'"
done

# --- the drop-in: the unit's command line with --http, and nothing else ---
"$repo/Deploy/systemd/live-view-conf.sh" 0.0.0.0:8080 > "$work/live-view.conf"; status=$?
unit_start=$(sed -n 's/^ExecStart=//p' "$repo/Deploy/systemd/shutter.service" | tail -n 1)
check "live-view-conf.sh 0.0.0.0:8080: exit $status, ExecStart= emptied, then the unit's own with --http 0.0.0.0:8080" \
  bash -c "[ $status = 0 ] && [ \"\$(grep -c '^ExecStart=' '$work/live-view.conf')\" = 2 ] && grep -qx 'ExecStart=' '$work/live-view.conf' \
    && grep -qxF 'ExecStart=$unit_start --http 0.0.0.0:8080' '$work/live-view.conf' && [ \"\$(grep -vc '^#' '$work/live-view.conf')\" = 3 ]"
"$repo/Deploy/systemd/live-view-conf.sh" '[::]:8080' > /dev/null 2>&1; status=$?
check "live-view-conf.sh takes an IPv6 address in brackets ([::]:8080): exit $status" [ "$status" = 0 ]
if command -v systemd-analyze > /dev/null && [ -x "$SHUTTER" ]; then
  # verify insists the binary exists: the unit and the drop-in point at the one under test.
  mkdir -p "$work/unit/shutter.service.d"
  sed "s|/usr/local/bin/shutter|$SHUTTER|" "$repo/Deploy/systemd/shutter.service" > "$work/unit/shutter.service"
  "$repo/Deploy/systemd/live-view-conf.sh" 0.0.0.0:8080 "$work/unit/shutter.service" > "$work/unit/shutter.service.d/live-view.conf"
  cp "$repo/Deploy/systemd/network.conf" "$work/unit/shutter.service.d/"
  systemd-analyze verify "$work/unit/shutter.service" > "$work/verify.out" 2>&1; status=$?
  check "systemd-analyze verify: the unit with live-view.conf and network.conf: exit $status, no complaints" \
    bash -c "[ $status = 0 ] && [ ! -s '$work/verify.out' ]"
else
  skip "systemd-analyze or $SHUTTER missing: the unit with live-view.conf is not verified"
fi

# --- the link install.sh prints once the service runs ---
if [ -x "$SHUTTER" ]; then
  token=0123456789abcdef0123456789abcdef
  printf '%s\n' "$token" > "$work/http-token"
  "$SHUTTER" link --board "$board" --http 0.0.0.0:8080 --token-file "$work/http-token" > "$work/link.out" 2>&1; status=$?
  check "shutter link as install.sh runs it: exit $status, the link with the token ($(head -1 "$work/link.out" | cut -c1-90)) and a QR code" \
    bash -c "[ $status = 0 ] && grep -q ':8080/?token=$token' '$work/link.out' && grep -q '▀\|▄' '$work/link.out'"
  "$SHUTTER" link --board "$board" --http 0.0.0.0:8080 --token-file "$work/missing" --wait 1 > "$work/wait.out" 2>&1; status=$?
  check "shutter link with no token after --wait 1: exit 1 (got $status), saying the daemon makes it: $(head -1 "$work/wait.out")" \
    bash -c "[ $status = 1 ] && grep -q 'holds no token yet' '$work/wait.out'"
else
  skip "$SHUTTER is not built: shutter link not run"
fi
finish
