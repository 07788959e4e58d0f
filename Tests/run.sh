#!/usr/bin/env bash
# run.sh - the whole test run: what the README's test command and CI run.
#
#   Tests/run.sh            build and unit-test against libgpiod 1.6 and 2.x, the API abuse
#                           bench and live view's load bench on the simulator (limits on memory,
#                           latency, watchdog, lost photos), the live-view page in headless
#                           Chromium, the MQTT rig against a loopback mosquitto (three
#                           daemons), the benchmark's short run, then the real-kernel tests (gpio-sim, vivid; live view next
#                           to µStreamer) in a qemu guest for both,
#                           and the USB webcam tests (uvcvideo, VM_UVC=1) in one more guest,
#                           the MQTT rig on a poor network (netns, netem) in another,
#                           the installed unit's sandbox in a guest booted with systemd
#                           (VM_SYSTEMD=1),
#                           and libcamera on vimc once, in a guest of its own; and, in a
#                           Debian 13 root (Deploy/debian-root.sh trixie, made once and cached),
#                           build and unit-test with trixie's swiftlang 6.0.3, libgpiod 2.2
#                           and libcamera 0.4, and the gpio and libcamera (vimc) suites in guests
#                           booted with that root; in a Debian sid root the same with sid's
#                           swiftlang 6.2 and libcamera 0.7, and its libcamera suite on vimc
#   Tests/run.sh --no-vm    everything but the qemu guests
#   Tests/run.sh --help
#
# Prints each stage's time and ends with "stages: N passed, N failed", the count of tests and
# checks that were skipped, with why (Swift Testing's "skipped", the VM suites' "skip - "), so
# a skipped safety test never passes unseen, and last each failed stage's name and failing
# lines, so the end of a CI log says what failed.
set -uo pipefail
cd "$(dirname "$(readlink -f "$0")")/.."
export PATH=/opt/swift/usr/bin:$PATH

vm=yes
case "${1:-}" in
  --no-vm) vm=no ;;
  -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
  "") ;;
  *) echo "run.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
esac

passed=0 failed=0
# What the stages print is kept too, to count the skipped tests at the end and to say what
# failed in each failed stage (a CI log is often read from its end): its lines in the output
# and its name, in failed_stages ("FIRST LAST NAME" a line).
output=$(mktemp /tmp/shutter-run.XXXXXX)
trap 'rm -f "$output"' EXIT
failed_stages=
stage() {   # stage NAME COMMAND...: run, time, count one result
  local name=$1; shift
  local start=$SECONDS first
  first=$(($(wc -l < "$output") + 1))
  echo "=== $name"
  "$@" 2>&1 | tee -a "$output"
  if [ "${PIPESTATUS[0]}" = 0 ]; then
    echo "=== $name: ok ($((SECONDS - start)) s)"; passed=$((passed + 1))
  else
    echo "=== $name: FAILED ($((SECONDS - start)) s)"; failed=$((failed + 1))
    failed_stages+="$first $(wc -l < "$output") $name"$'\n'
  fi
}
plain() { sed 's/\x1b\[[0-9;]*m//g'; }   # without the terminal's colour codes
# failure_summary: each failed stage's name and its failing lines (Swift Testing's failed
# tests and issues, the suites' "not ok", compiler errors), or its last lines when none match.
failure_summary() {
  local first last name lines
  while read -r first last name; do
    [ -n "$first" ] || continue
    echo "--- failed: $name"
    [ "$last" -ge "$first" ] || { echo "(it printed nothing)"; continue; }
    lines=$(sed -n "${first},${last}p" "$output" | plain |
      grep -aE '(Test .* (failed|recorded an issue)|^not ok|error:|FAIL)' | grep -av 'skipped' | head -n 40)
    if [ -n "$lines" ]; then printf '%s\n' "$lines"; else sed -n "${first},${last}p" "$output" | tail -n 40; fi
  done <<< "$failed_stages"
}
vm_tests() {   # vm_tests BINARY: the Tests/VM suite in a fresh guest (the UVC and sandbox suites have their own)
  # Seven suites in one boot: 20 minutes before a hang is called one (a loaded machine needed over 10).
  Deploy/vm/run-in-vm.sh --timeout 1200 -- env SHUTTER="$PWD/$1" VM_SKIP="uvc unit-sandbox" Tests/VM/run-all.sh
}
debian_root() {   # debian_root SUITE: build and unit-test in SUITE's Debian root (.build-SUITE), with its Swift
  Deploy/debian-root.sh "$1" sh -c 'swift --version 2>&1 | head -n 1; pkg-config --modversion libgpiod libcamera | paste -sd " "' &&
    Deploy/debian-root.sh "$1" swift build && Deploy/debian-root.sh "$1" swift test
}
debian_root_vm() {   # debian_root_vm SUITE TIMEOUT [HOST-VAR=VALUE...] -- [GUEST-VAR=VALUE...] SCRIPT: Tests/VM in a guest whose / is SUITE's root
  local suite=$1 timeout=$2 host=(); shift 2
  while [ "$1" != -- ]; do host+=("$1"); shift; done
  shift
  env "${host[@]}" Deploy/vm/run-in-vm.sh --root "$(Deploy/debian-root.sh "$suite" --print-root)" --timeout "$timeout" -- \
    env SHUTTER="$PWD/.build-$suite/debug/shutter" "${@:1:$#-1}" bash "${@: -1}"
}
uvc_tests() {   # the USB webcam suite: its own boot with the camera, once (capture does not use libgpiod)
  VM_UVC=1 Deploy/vm/run-in-vm.sh -- env SHUTTER="$PWD/.build/debug/shutter" bash Tests/VM/test-uvc.sh
}

stage "build (libgpiod 1.6)" swift build
stage "unit tests (libgpiod 1.6)" swift test
stage "mutations (each guarded fault caught by its tests; one scratch build)" Tests/mutations.sh
# The streaming path's allocation count, under malloc-count (the tests skip themselves without it).
stage "allocation tests (malloc-count: streaming allocates nothing per frame)" Tests/allocation-tests.sh
stage "systemd unit (verify, security)" Deploy/systemd/check-unit.sh
stage "install --http (live view in one step, installing nothing)" env SHUTTER=.build/debug/shutter Tests/install-live-view.sh
stage "watchdog (the loop held by strace: its pings stop, then come again)" env SHUTTER=.build/debug/shutter Tests/watchdog-stall.sh
stage "simulator (demo session, keys under tmux)" env SHUTTER=.build/debug/shutter Tests/Simulator/test-simulator.sh
stage "simulated Pi rig (run, keys under tmux, check, capture --simulate through the libcamera backend)" env SHUTTER=.build/debug/shutter Tests/Simulator/test-simulate.sh
# Hundreds of clients that flood and never read, stuck subscribers, pipelined-then-close, a low
# descriptor limit, idle clients in every slot: the daemon's memory, a status probe and the
# watchdog held to limits; prints its figures.
stage "API abuse (clients that exhaust the daemon)" env SHUTTER_BENCH_ONLY=abuse .build/debug/shutter-daemon-bench .build/debug/shutter
# 16 viewers on /stream while a burst of photos is taken, 2000 bad requests, a viewer that stops
# reading for 30 s: every photo saved, memory bounded; prints latency and CPU figures.
stage "live view load (HTTP: viewers, bad requests, a stuck viewer)" env SHUTTER_BENCH_ONLY=http .build/debug/shutter-daemon-bench .build/debug/shutter
# The live-view page in headless Chromium against `shutter run` on the simulator board: the
# picture changes, a light press and a swipe show on the overlay within 300 ms, the page's shutter
# and scale, the token; screenshots in the run's artefacts.
stage "browser (live-view page in Chromium)" env SHUTTER=.build/debug/shutter ARTIFACTS="$PWD/.build/artifacts/browser" Tests/Browser/run.sh
# The rig over MQTT against Debian's mosquitto on a loopback port: three daemons,
# a broker restart, a late node, a wrong password, malformed payloads, discovery; the scale
# bench short (5 nodes, 3 shots).
stage "MQTT rig (three daemons and a loopback broker)" env SHUTTER=.build/debug/shutter Tests/MQTT/run.sh
# The benchmark's short run: a release build, every host figure produced once.
stage "bench (short: every figure produced)" Tests/bench.sh --short
stage "Debian 13 (swiftlang 6.0.3, libgpiod 2.2, libcamera 0.4): build and unit tests" debian_root trixie
# The newest libcamera API (string_view strings, FrameStartup), which Raspberry Pi OS's own
# libcamera 0.6 and 0.7 share, with Debian's newest Swift.
stage "Debian sid (swiftlang 6.2, libcamera 0.7): build and unit tests" debian_root sid
if [ "$vm" = yes ]; then
  stage "VM tests (libgpiod 1.6)" vm_tests .build/debug/shutter
  stage "VM tests (UVC webcam)" uvc_tests
  # A rig on a poor network: namespaces, veth pairs and netem, which the host kernel lacks.
  stage "VM tests (MQTT rig on a poor network: netns, netem)" env SHUTTER=.build/debug/shutter Tests/MQTT/test-netns.sh
  # systemd as the guest's PID 1: what libcamera needs (the DMA heap, udev's netlink socket)
  # and the photo encode's batch policy, under Deploy/systemd/shutter.service's own sandbox,
  # and refused without its allowances.
  stage "VM tests under systemd (the unit's sandbox)" env VM_SYSTEMD=1 Deploy/vm/run-in-vm.sh -- \
    bash Tests/VM/test-unit-sandbox.sh
  # libcamera on vimc: once per run, in its own boot (vimc, udevd), with the 1.6 build.
  # --timeout 900: about 6 min alone, near the default 600 s on a loaded machine.
  stage "VM tests (libcamera on vimc)" env VM_VIMC=1 Deploy/vm/run-in-vm.sh --timeout 900 -- \
    env SHUTTER="$PWD/.build/debug/shutter" bash Tests/VM/test-libcamera.sh
  # After the Debian root stages, with their binaries. libgpiod 2.x: the suites that drive
  # lines (gpio, feedback, run) with trixie's libgpiod 2.2, its tools and its Swift, as a Pi
  # on Raspberry Pi OS trixie has them; the capture, daemon, photo-files, install and live-view
  # suites use no libgpiod call the 1.6 run above does not, so they run once. libcamera for real at both
  # ends of the range: the host's 0.0.3 above and sid's 0.7 (the API Raspberry Pi OS's 0.6
  # and 0.7 share; about 5 min alone, 20 min before a hang); trixie's 0.4 is built and
  # unit-tested above.
  stage "VM tests in the Debian 13 root (libgpiod 2.2: gpio, feedback, run)" \
    debian_root_vm trixie 1200 -- VM_SKIP="uvc unit-sandbox capture daemon photo-files install liveview libcamera" Tests/VM/run-all.sh
  stage "VM tests in the Debian sid root (libcamera 0.7 on vimc)" debian_root_vm sid 1200 VM_VIMC=1 -- Tests/VM/test-libcamera.sh
fi
echo "stages: $passed passed, $failed failed"
# Swift Testing: "Test name() skipped: "why""; the VM suites: "skip - why".
skips=$(grep -aE '(Test .* skipped|^skip - )' "$output" | plain)
echo "skipped: $(printf '%s' "$skips" | grep -c .)"
[ -z "$skips" ] || printf '%s\n' "$skips" | sed 's/^ */  /' | sort | uniq -c
failure_summary
[ "$failed" = 0 ]
