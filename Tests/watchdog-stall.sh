#!/usr/bin/env bash
# watchdog-stall.sh - the systemd watchdog's pings come from the event loop itself, so a stalled
# loop stops them (and systemd, after WatchdogSec, restarts the service). On the host, no
# systemd: a notify socket as systemd's (socat), `shutter run` with WATCHDOG_USEC, and strace
# holding the loop thread in its poll (strace -e inject=ppoll:delay_enter, attached to that one
# thread, the process's main thread) while the daemon's other threads run on. The pings must
# stop while it is held and come again once it is let go. Needs strace and socat.
#
#   SHUTTER=.build/debug/shutter Tests/watchdog-stall.sh
set -u
here=$(dirname "$(readlink -f "$0")")
. "$here/VM/lib.sh"
shutter=$(readlink -f "${SHUTTER:-$here/../.build/debug/shutter}")
board=$(readlink -f "$here/../Boards/simulator.json")
work=$(mktemp -d)
daemon= listener= tracer=
trap 'kill $tracer $daemon $listener 2> /dev/null; wait 2> /dev/null; rm -rf "$work"' EXIT
wait_until() { for _ in $(seq 100); do "$@" 2> /dev/null && return 0; sleep 0.1; done; return 1; }
for tool in strace socat; do
  command -v $tool > /dev/null || { echo "# watchdog-stall.sh: needs $tool"; exit 1; }
done

socat -u UNIX-RECV:"$work/notify.sock" OPEN:"$work/notify.out",creat,append &
listener=$!
wait_until test -S "$work/notify.sock"
# 200 ms: a ping every 100 ms (half of it, as sd_watchdog_enabled(3) advises).
(cd "$work" && exec env NOTIFY_SOCKET="$work/notify.sock" WATCHDOG_USEC=200000 \
  "$shutter" run --board "$board" --no-state --socket "$work/api.sock" < /dev/null > events.jsonl 2> run.err) &
daemon=$!
wait_until grep -q READY=1 "$work/notify.out" || { echo "# no READY=1: $(tail -n 3 "$work/run.err")"; }
# Datagrams, appended without separators: count the pings themselves.
pings() { grep -o WATCHDOG=1 "$work/notify.out" | wc -l; }

sleep 1
before=$(pings); sleep 1; running=$(( $(pings) - before ))
check "running: the loop pings about every 100 ms ($running in 1 s)" [ "$running" -ge 5 ]

# The daemon is the process whose parent is this subshell's child: find its main thread.
pid=$(pgrep -P $daemon -x shutter || echo $daemon)
check "the daemon's process is found ($pid)" test -d /proc/$pid
# Each ppoll of the main thread (the loop's) is held 5 s before it runs.
strace -qq -p $pid -e trace=ppoll -e inject=ppoll:delay_enter=5000000 -o /dev/null &
tracer=$!
sleep 0.5
before=$(pings); sleep 1.5; held=$(( $(pings) - before ))
threads=$(ls /proc/$pid/task | wc -l)
check "held: no ping while the loop is held in its poll ($held in 1.5 s; the process's $threads threads run on)" [ "$held" = 0 ]
kill $tracer; wait $tracer 2> /dev/null; tracer=
sleep 6   # the held poll's delay ends
before=$(pings); sleep 1; after=$(( $(pings) - before ))
check "let go: the pings come again ($after in 1 s)" [ "$after" -ge 5 ]
check "let go: the daemon still answers ($(tail -n 1 "$work/run.err"))" "$shutter" status --socket "$work/api.sock"
finish
