#!/usr/bin/env python3
"""bench-decision.py: edge → event on the host's real CPU, next to the C timer floor.

  Tests/bench-decision.py [--presses N] [--light-presses M] [--shutter BINARY] [--tsv FILE]

The VM's figure (Tests/VM/bench-edge.sh) runs under software emulation, where any code that runs
after a wake-up costs far more than on a CPU, while the floor programs run almost none. This is
the same measure on the host, natively: `shutter run` on the simulator board (its mock chip; the
synthetic camera encoding each photo), N full clicks (default 100, 400 ms apart) from standard
input, a subscriber (Tests/VM/probes/stamp-lines.c) stamping CLOCK_MONOTONIC as each line's read
returns: a `capture began` line's arrival minus its `t` (the decision's instant, pressedAt + the
confirmation window) is how far beyond the window the event reached a subscriber. Then M light
presses (default N/3, 800 ms apart, `half` held 100 ms): a `lightPress` is decided when the
double-press window has passed after the release, a deadline the loop waits far longer for than
a press's 5 ms window (as long as the camera's frame interval, or the whole window with the
camera stopped); its line's arrival minus its `t` is measured the same way. Next to it, in
the same seconds, Tests/VM/probes/timer-floor.c: a C program sleeping with clock_nanosleep
(TIMER_ABSTIME) to instants 400 ms apart, how late it wakes (the floor for a decision at the end
of a window), and the same with its line through a socket to another process (the floor for one
that reaches a subscriber). Prints p50/p99 and the ratios; --tsv appends Tests/bench.sh's rows.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROBES = os.path.join(ROOT, "Tests", "VM", "probes")


def percentile(values, p):
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[max(0, min(len(ordered) - 1, -(-len(ordered) * p // 100) - 1))]


def main():
    options = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    options.add_argument("--presses", type=int, default=100, help="full clicks, 400 ms apart (default 100)")
    options.add_argument("--light-presses", type=int, help="light presses after the clicks, 800 ms apart (default presses / 3)")
    options.add_argument("--shutter", default=os.path.join(ROOT, ".build", "release", "shutter"),
                         help="the binary (default .build/release/shutter: swift build -c release)")
    options.add_argument("--tsv", help="append Tests/bench.sh's rows to this file")
    arguments = options.parse_args()
    if arguments.presses < 1:
        options.error("--presses must be at least 1")
    if arguments.light_presses is None:
        arguments.light_presses = max(1, arguments.presses // 3)
    if arguments.light_presses < 1:
        options.error("--light-presses must be at least 1")
    work = tempfile.mkdtemp(prefix="bench-decision.")
    try:
        return run(arguments, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(arguments, work):
    for probe in ("stamp-lines", "timer-floor"):
        subprocess.run(["cc", "-O2", "-o", os.path.join(work, probe), os.path.join(PROBES, probe + ".c")], check=True)
    board = json.load(open(os.path.join(ROOT, "Boards", "simulator.json")))
    board.setdefault("output", {})["directory"] = os.path.join(work, "photos")
    full = next(line for line in board["lines"] if line["role"] == "full")
    window = max(full.get("debounceMs", board.get("lineDefaults", {}).get("debounceMs", 0)),
                 board.get("gestures", {}).get("glitchFilterMs", 0))
    double_window = board.get("gestures", {}).get("doublePressWindowMs", 300)
    with open(os.path.join(work, "board.json"), "w") as f:
        json.dump(board, f)
    period, first = 0.4, 1.5
    with open(os.path.join(work, "clicks.jsonl"), "w") as f:
        for k in range(arguments.presses):
            t = first + k * period
            for offset, line, active in ((0, "half", True), (0.06, "full", True), (0.12, "full", False), (0.18, "half", False)):
                f.write(json.dumps({"t": round(t + offset, 3), "line": line, "active": active}) + "\n")
        # Each light press takes two of the floors' 400 ms periods; its edges and its decision
        # (release + the double-press window) fall clear of their instants.
        for k in range(arguments.light_presses):
            t = first + (arguments.presses + 2 * k) * period
            for offset, active in ((0, True), (0.1, False)):
                f.write(json.dumps({"t": round(t + offset, 3), "line": "half", "active": active}) + "\n")
    sock = os.path.join(work, "api.sock")
    daemon = subprocess.Popen([arguments.shutter, "run", "--no-state", "--board", os.path.join(work, "board.json"), "--socket", sock],
                              stdin=open(os.path.join(work, "clicks.jsonl")), stdout=subprocess.DEVNULL,
                              stderr=open(os.path.join(work, "run.err"), "w"))
    processes = [daemon]
    try:
        for _ in range(100):
            if os.path.exists(sock):
                break
            time.sleep(0.01)
        arrivals = open(os.path.join(work, "arrivals"), "w")
        processes.append(subprocess.Popen([os.path.join(work, "stamp-lines"), sock, '{"cmd":"subscribe"}'], stdout=arrivals))
        # The floors' instants fall between the presses' decisions (first + 0.06 + window, every period).
        late_out, hop_out = open(os.path.join(work, "late"), "w"), open(os.path.join(work, "hop"), "w")
        ms = int(period * 1000)
        periods = arguments.presses + 2 * arguments.light_presses
        processes.append(subprocess.Popen([os.path.join(work, "timer-floor"), str(periods), str(ms), str(int(first * 1000) + ms // 3)], stdout=late_out))
        processes.append(subprocess.Popen([os.path.join(work, "timer-floor"), str(periods), str(ms), str(int(first * 1000) + 2 * ms // 3), "--hop"], stdout=hop_out))
        deadline = time.monotonic() + first + periods * period + 5
        for process in processes[2:]:
            process.wait(timeout=max(1, deadline - time.monotonic()))
        while time.monotonic() < deadline:
            began, light = counted(work)
            if began >= arguments.presses and light >= arguments.light_presses:
                break
            time.sleep(0.1)
    finally:
        for process in processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
    beyond, light = [], []
    for line in open(os.path.join(work, "arrivals")):
        stamp, _, text = line.partition(" ")
        event = json.loads(text)
        if event.get("event") == "capture" and event.get("phase") == "began":
            beyond.append((int(stamp) - round(event["t"] * 1e9)) / 1e6)
        elif event.get("event") == "lightPress":
            light.append((int(stamp) - round(event["t"] * 1e9)) / 1e6)
    late = [(int(r[1]) - int(r[0])) / 1e6 for r in (l.split() for l in open(os.path.join(work, "late"))) if len(r) >= 2]
    hopped = [(int(r[2]) - int(r[0])) / 1e6 for r in (l.split() for l in open(os.path.join(work, "hop"))) if len(r) >= 3]
    print(f"edge → event on the host (simulator board, {len(beyond)} of {arguments.presses} presses; window {window:g} ms; "
          f"{len(light)} of {arguments.light_presses} light presses; floor samples: timer {len(late)}, timer + socket {len(hopped)})")
    rows = []
    for label, p in (("p50", 50), ("p99", 99)):
        ours, floor, floor_hop = percentile(beyond, p), percentile(late, p), percentile(hopped, p)
        print(f"  {label}: shutter beyond the window {ours:.3f} ms; C timer late {floor:.3f} ms, {ours / floor:.2f}×; "
              f"C timer + a socket to another process {floor_hop:.3f} ms, {ours / floor_hop:.2f}×")
        name = f"edge → subscriber, beyond the {window:g} ms window {label} (host, simulator)"
        rows.append(f"decision\t{name}\t{ours:.3f}\tms\tC timer at the window's end, late {label} (host)\t{floor:.3f}\t{ours / floor:.2f}")
        rows.append(f"decision\t{name}\t{ours:.3f}\tms\tC timer, then a socket to another process {label} (host)\t{floor_hop:.3f}\t{ours / floor_hop:.2f}")
    for label, p in (("p50", 50), ("p99", 99)):
        ours, floor = percentile(light, p), percentile(late, p)
        print(f"  {label}: light press beyond its {double_window:g} ms double-press window {ours:.3f} ms; C timer late {floor:.3f} ms, {ours / floor:.2f}×")
        name = f"light press → subscriber, beyond its {double_window:g} ms double-press window {label} (host, simulator)"
        rows.append(f"decision\t{name}\t{ours:.3f}\tms\tC timer at the window's end, late {label} (host)\t{floor:.3f}\t{ours / floor:.2f}")
    if arguments.tsv:
        with open(arguments.tsv, "a") as tsv:
            tsv.write("".join(row + "\n" for row in rows))
    if len(beyond) < arguments.presses or len(light) < arguments.light_presses or not late or not hopped:
        print(f"bench-decision: {len(beyond)} capture began lines of {arguments.presses} presses, {len(light)} lightPress lines "
              f"of {arguments.light_presses}; see {work}/run.err", file=sys.stderr)
        return 1
    return 0


def counted(work):
    """The `capture began` and `lightPress` lines that have arrived."""
    with open(os.path.join(work, "arrivals")) as f:
        lines = f.readlines()
    return (sum('"began"' in line and '"capture"' in line for line in lines), sum('"lightPress"' in line for line in lines))


if __name__ == "__main__":
    sys.exit(main())
