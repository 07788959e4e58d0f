#!/usr/bin/env bash
# Feedback lines against a real kernel driver: the LED and the buzzer are requested as
# outputs on gpio-sim and their values read back through sysfs while presses are driven.
# Runs inside the VM (Deploy/vm/run-in-vm.sh), for both libgpiod builds.
set -u
here=$(dirname "$(readlink -f "$0")")
. "$here/lib.sh"
: "${SHUTTER:?set SHUTTER to the shutter binary}"
work=$(mktemp -d)

# A chip of its own (label rig-fb) with the rig's lines plus 'led' and 'buzzer', so the
# harness's chip and the other suites stay as they are.
names="half full secondary pad0 pad1 pad2 pad3 pad4 pad5 led buzzer"
chip=/sys/kernel/config/gpio-sim/rig-fb
mkdir -p $chip/bank0 && echo 11 > $chip/bank0/num_lines && echo rig-fb > $chip/bank0/label
n=0; for name in $names; do mkdir -p $chip/bank0/line$n && echo $name > $chip/bank0/line$n/name; n=$((n + 1)); done
echo 1 > $chip/live
GPIOCHIP=$(cat $chip/bank0/chip_name)
GPIO_SIM_DIR=/sys/devices/platform/$(cat $chip/dev_name)/$GPIOCHIP
VM_GPIO_NAMES=$names
value() { cat "$GPIO_SIM_DIR/sim_gpio$(line_offset "$1")/value"; }
# watch_photo SECONDS: samples the LED and the buzzer until both have pulsed (or SECONDS pass);
# prints the runs of values each took ("010", "101"). No forks in the loop: a fork takes tens of
# milliseconds under emulation, longer than the buzzer's click.
watch_photo() {
  local led_file="$GPIO_SIM_DIR/sim_gpio$(line_offset led)/value" buzzer_file="$GPIO_SIM_DIR/sim_gpio$(line_offset buzzer)/value"
  local end=$(( ${EPOCHREALTIME/./} + $1 * 1000000 )) v led="" buzzer=""
  mkfifo "$work/never"; exec 7<> "$work/never"
  while [ "${EPOCHREALTIME/./}" -lt $end ]; do
    read -r -t 0.002 -u 7   # a 2 ms pause without a fork, so the daemon gets the CPU
    read -r v < "$led_file"; [ "${led: -1}" = "$v" ] || led+=$v
    read -r v < "$buzzer_file"; [ "${buzzer: -1}" = "$v" ] || buzzer+=$v
    [[ $led == *010* && $buzzer == *101* ]] && break
  done
  exec 7<&-
  echo "led $led buzzer $buzzer"
}

sed -e 's/"chip": "rig-sim"/"chip": "rig-fb"/' -e 's/"device": "vivid", "width": 1280, "height": 720/"device": "synthetic", "width": 320, "height": 240/' \
    -e 's/"lightPressMaxMs": 350/"lightPressMaxMs": 3000, "prepareAfterMs": 5000, "controlsIdleTimeoutMs": 10000/' \
    -e 's|"output": {|"feedback": [{"role": "led"}, {"role": "buzzer", "line": "buzzer", "activeLow": true}], "output": {|' \
    -e "s|\"directory\": \"photos\"|\"directory\": \"$work/photos\"|" Boards/gpio-sim.json > "$work/board.json"
"$SHUTTER" run --board "$work/board.json" --no-state > "$work/events" 2> "$work/err" < /dev/null &
daemon=$!
wait_for_consumer led shutter || not_ok "the daemon requested the feedback lines (gpioinfo shows led used by shutter)"
check "led requested as an output and dark at start (value $(value led))" [ "$(value led)" = 0 ]
check "buzzer (active-low) silent at start: pin high (value $(value buzzer))" [ "$(value buzzer)" = 1 ]

# Emulation stretches every sleep (the machine is shared), so the light press is widened above;
# it shows once the double-press window has passed. The chooser's blink is left to the unit tests.
# A light press: the controls become active, the LED lights.
drive half up; sleep 0.12; drive half down
lit=no
for _ in $(seq 150); do grep -q controlsActive "$work/events" && [ "$(value led)" = 1 ] && { lit=yes; break; }; sleep 0.2; done
check "light press: controlsActive, LED lit" [ $lit = yes ]

# Idle: the controls go away, the LED goes dark.
dark=no
for _ in $(seq 150); do grep -q controlsInactive "$work/events" && [ "$(value led)" = 0 ] && { dark=yes; break; }; sleep 0.2; done
check "controls idle: controlsInactive, LED dark" [ $dark = yes ]

# A full click: a photo, the LED's flash and the buzzer's click (its pin pulled low).
watch_photo 40 > "$work/watched" &
watcher=$!
sleep 0.5
drive half up; drive full up; sleep 0.1; drive full down; drive half down
wait $watcher; seen=$(cat "$work/watched")
check "full click: a photo is saved" grep -q '"photo"' "$work/events"
check "full click: the LED flashed and the buzzer clicked ($seen)" bash -c "[[ '$seen' == 'led '*010*' buzzer '*101* ]]"

kill -TERM $daemon; wait $daemon; status=$?
check "SIGTERM: exit 0 (got $status), LED dark ($(value led)), lines released" \
  bash -c "[ $status = 0 ] && [ $(value led) = 0 ] && ! gpioinfo $GPIOCHIP | grep -q '\"led\".*\"shutter\"'"
[ "$failed" = 0 ] || { echo "# events:"; sed 's/^/#   /' "$work/events" | tail -20; sed 's/^/#   /' "$work/err" | tail -10; }
finish
