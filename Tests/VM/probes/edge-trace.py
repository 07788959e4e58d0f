#!/usr/bin/env python3
"""edge-trace.py: where each press's time went, from an ftrace of bench-edge.sh --ftrace.

  edge-trace.py [--floor WINDOWED --window W --tsv FILE [--tag TAG]] DAEMON TRACE...

DAEMON is edge-bench.py's "PRESSED_AT_NS T_NS ARRIVED_NS" per press (T: the end of the
confirmation window, the decision's time); each TRACE an ftrace text dump on the mono clock
(CLOCK_MONOTONIC, as the lines' stamps) with sched_wakeup, sched_switch and the syscall events
bench-edge.sh enables. For each press, in the trace that holds its T:
  send     the daemon's first write to the subscriber's socket at or after T (sendto/sendmsg)
  awake    the loop's wake-up that sent it: its last return from ppoll before the send, or T
           when that was before T (the loop woke ahead of T and polled without sleeping)
  woken    the subscriber (stamp-lines) is woken, and on which CPU relative to the loop's
  running  the subscriber is switched in; what ran on that CPU in between (by command)
  read     its read returns (the stamp the bench uses)
  sleeps   the loop's next switch-out to sleep after the send (the rest of its turn)
Prints the p50/p90 of each step, from T, and the commands that held the subscriber's CPU
between its wake-up and its running, summed over all presses; and, of the subscribers woken on
the other CPU, how many were woken only after the loop slept: when the host queues one emulated
CPU's thread behind the other's (Deploy/vm/run-in-vm.sh gives each a host CPU of its own; with
VM_PIN=0 it does not), a wake-up sent to the other CPU waits until the sending one goes idle.

With --floor (edge-floor --window's output, WINDOWED) it also puts T → send, the moment the
decision leaves shutter for its subscriber, next to the C timer floor's lateness: the same
measure of the same thing (a decision in hand at the end of a window, before any hop to another
process), which the subscriber's arrival is not (it adds the hop, which the emulated machine's
cross-CPU wake-up makes cost more than the timer itself). --tsv appends those rows in
Tests/bench.sh's format.
"""
import argparse
import re
import sys
from collections import defaultdict

LINE = re.compile(r"^\s*(?P<comm>.+?)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+\S+\s+(?P<ts>\d+\.\d+): (?P<event>\w+)(?P<kind>: ?|\(| -> )(?P<rest>.*)$")


def parse(path):
    events = []
    with open(path, errors="replace") as f:
        for line in f:
            m = LINE.match(line)
            if m:
                # Syscall events print as "sys_read(fd: 3, ...)" on entry and "sys_read -> 0x10" on exit.
                event = m["event"]
                if m["kind"] == "(":
                    event = event.replace("sys_", "sys_enter_", 1)
                elif m["kind"] == " -> ":
                    event = event.replace("sys_", "sys_exit_", 1)
                events.append((round(float(m["ts"]) * 1e9), m["comm"].strip(), int(m["pid"]), int(m["cpu"]), event, m["rest"]))
    return events


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))] if values else float("nan")


def main():
    options = argparse.ArgumentParser(description="where each press's time went, from an ftrace")
    options.add_argument("--floor", help="edge-floor --window's output: the C timer floor")
    options.add_argument("--window", type=float, help="the confirmation window, ms")
    options.add_argument("--tsv", help="append the rows to this file")
    options.add_argument("--tag", default="", help="a label for the rows (the binary)")
    options.add_argument("daemon")
    options.add_argument("traces", nargs="+")
    arguments = options.parse_args()
    presses = [tuple(int(x) for x in line.split()) for line in open(arguments.daemon) if line.strip()]
    traces = [parse(path) for path in arguments.traces]
    steps = defaultdict(list)
    holders = defaultdict(int)
    same_cpu = 0
    counted = 0
    woken_after_sleep = []   # send → woken, for subscribers on the other CPU woken after the loop slept
    woken_before_sleep = []  # the same, woken while the loop still ran
    for pressed, decided, arrived in presses:
        trace = next((t for t in traces if t and t[0][0] <= decided <= t[-1][0]), None)
        if trace is None:
            continue
        start = next(i for i, e in enumerate(trace) if e[0] >= decided)
        # The decision's line leaving shutter: its first socket write at or after T, whether or
        # not the loop slept until T (it may have been awake already, handling a frame).
        at = next((i for i in range(start, len(trace)) if trace[i][0] <= decided + 200_000_000 and trace[i][1].startswith("shutter")
                   and trace[i][4] in ("sys_enter_sendto", "sys_enter_sendmsg")), None)
        if at is None:
            continue
        send, loop_pid, loop_cpu = trace[at][0], trace[at][2], trace[at][3]
        steps["T → send"].append(send - decided)
        # The loop's wake-up that sent it: its last return from ppoll before the send. Woken
        # ahead of T (the board's wakeAheadMs), the loop polls without sleeping until T, and the
        # pass that reaches T may have left ppoll just before it: then it was awake at T.
        awake = next((e[0] for e in reversed(trace[:at]) if e[2] == loop_pid and e[4] == "sys_exit_ppoll"), None)
        if awake is None:
            continue
        awake = max(awake, decided)
        woken = running = read = slept = None
        woken_cpu = target_cpu = None
        subscriber = None
        for ts, comm, pid, cpu, event, rest in trace[at:]:
            if ts > decided + 200_000_000:
                break
            if slept is None and event == "sched_switch" and f"prev_pid={loop_pid} " in rest and "prev_state=S" in rest:
                slept = ts
            if woken is None:
                if event == "sched_wakeup" and "comm=stamp-lines" in rest:
                    woken = ts
                    subscriber = int(re.search(r"pid=(\d+)", rest)[1])
                    woken_cpu = target_cpu = int(re.search(r"target_cpu=(\d+)", rest)[1])
                continue
            if running is None:
                if event == "sched_switch" and f"next_pid={subscriber} " in rest + " ":
                    running, woken_cpu = ts, cpu  # where it ran (it may have been moved)
                continue
            if read is None and pid == subscriber and event == "sys_exit_read":
                read = ts
            if read is not None and slept is not None:
                break
        if None in (woken, running):
            continue
        if slept is not None:
            steps["send → loop sleeps"].append(slept - send)
            if target_cpu != loop_cpu:
                (woken_after_sleep if woken >= slept else woken_before_sleep).append(woken - send)
        counted += 1
        same_cpu += woken_cpu == loop_cpu
        steps["T → loop awake"].append(awake - decided)
        steps["awake → send"].append(send - awake)
        steps["send → subscriber woken"].append(woken - send)
        steps["woken → subscriber running"].append(running - woken)
        if read:
            steps["running → read returns"].append(read - running)
        steps["send → arrival (bench stamp)"].append(arrived - send)
        steps["T → arrival (bench stamp)"].append(arrived - decided)
        # The subscriber's CPU between its wake-up and its switch-in, by command.
        window = [e for e in trace if woken <= e[0] <= running and e[3] == woken_cpu and e[4] == "sched_switch"]
        last_ts, last_comm = woken, None
        for ts, comm, pid, cpu, event, rest in window:
            holder = last_comm or comm
            holders[holder] += ts - last_ts
            nxt = re.search(r"next_comm=(.+?) next_pid", rest)
            last_ts, last_comm = ts, nxt[1] if nxt else None
        holders[last_comm or "?"] += running - last_ts
    print(f"{counted} of {len(presses)} presses traced; subscriber woken on the loop's CPU in {same_cpu}")
    for name, values in steps.items():
        print(f"  {name:28s} p50 {percentile(values, 50) / 1e6:7.3f} ms   p90 {percentile(values, 90) / 1e6:7.3f} ms")
    if woken_after_sleep or woken_before_sleep:
        print(f"  woken on the other CPU only after the loop slept: {len(woken_after_sleep)} of "
              f"{len(woken_after_sleep) + len(woken_before_sleep)}, send → woken p50 {percentile(woken_after_sleep, 50) / 1e6:.3f} ms; "
              f"woken while the loop ran: p50 {percentile(woken_before_sleep, 50) / 1e6:.3f} ms")
    print("  the subscriber's CPU between its wake-up and its running, summed:")
    for comm, total in sorted(holders.items(), key=lambda x: -x[1])[:8]:
        print(f"    {comm:24s} {total / 1e6:8.3f} ms")
    if arguments.floor and arguments.window is not None:
        compare_with_floor(steps["T → send"], arguments)


def compare_with_floor(sent, arguments):
    """T → send against the C timer's lateness (edge-floor --window: EDGE KERNEL_NS READ_NS WOKE_NS [ARRIVED_NS])."""
    with open(arguments.floor) as f:
        late = [(int(r[3]) - int(r[1])) / 1e6 - arguments.window for r in (line.split() for line in f) if len(r) >= 4]
    sent = [ns / 1e6 for ns in sent]
    rows = []
    met = bool(sent and late)
    for label, p, goal in (("p50", 50, 1.5), ("p99", 99, 2.0)):
        ours, floor = percentile(sent, p), percentile(late, p)
        ratio = ours / floor if floor > 0 else float("nan")
        met = met and ratio <= goal
        print(f"  {label}: decision sent (T → sendto) {ours:.3f} ms; C timer floor late {floor:.3f} ms; {ratio:.2f}× (goal ≤ {goal:g}×)")
        name = f"edge → decision sent (sendto, ftrace), beyond the {arguments.window:g} ms window {label}"
        if arguments.tag:
            name += f" [{arguments.tag}]"
        rows.append(f"edge→event\t{name}\t{ours:.3f}\tms\tC timer at edge + window, late {label}\t{floor:.3f}\t{ratio:.2f}")
    print(f"  goal for the decision (≤ 1.5× the timer floor at p50, ≤ 2× at p99): {'met' if met else 'missed'}")
    if arguments.tsv:
        with open(arguments.tsv, "a") as tsv:
            tsv.write("".join(row + "\n" for row in rows))


if __name__ == "__main__":
    main()
