#!/usr/bin/env python3
"""edge-bench.py: the guest side of Tests/VM/bench-edge.sh (edge → event on gpio-sim).

  edge-bench.py drive STAMP_LINES SOCKET SIM_DIR PRESSES OUT [PROBE_OFFSET ...]
      Subscribes to the daemon's API socket through STAMP_LINES (probes/stamp-lines.c, which
      stamps each line with CLOCK_MONOTONIC as its read returns) and makes PRESSES full clicks on the board's
      half and full lines (gpio-sim offsets 0 and 1) through SIM_DIR/sim_gpioN/pull, edges
      spaced >= 60 ms. OUT gets "PRESSED_AT_NS T_NS ARRIVED_NS" per press (T: the
      decision's time the line carries, the end of the window). After each
      click (its photo saved), each PROBE_OFFSET line is toggled once, 60 ms apart, for the
      floor programs watching them.
  edge-bench.py analyse WINDOW_MS DAEMON RAW GPIOMON WINDOWED TSV [LABEL]
      Prints the figures and appends the rows to TSV (Tests/bench.sh's format:
      section, name, value, unit, peer, peer value, ratio), LABEL after each name when given.
"""
import os
import select
import subprocess
import sys
import time


def now():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def pull(sim_dir, offset, up):
    with open(f"{sim_dir}/sim_gpio{offset}/pull", "w") as f:
        f.write("pull-up" if up else "pull-down")


def field(line, name):
    """A number member of an event line (seconds, to the microsecond) in nanoseconds."""
    text = line.split(f'"{name}": ', 1)[1].split(",", 1)[0].split("}", 1)[0]
    return round(float(text) * 1e9)


def drive(stamper, sock_path, sim_dir, presses, out_path, probes):
    # The subscriber is stamp-lines (C): it stamps each line when its read returns, so the
    # arrival is the line's, not this script's wake-up; the script reads its stamped lines to
    # pace the clicks.
    subscriber = subprocess.Popen([stamper, sock_path, '{"cmd":"subscribe"}'], stdout=subprocess.PIPE)
    stream = subscriber.stdout.fileno()
    buffer = b""
    began = []       # (pressedAt, t: the decision's time, arrival), ns
    photos = 0

    def read_for(seconds, until=None):
        """Reads stamped event lines for up to `seconds`; returns early once until(line) is
        true for a line."""
        nonlocal buffer, photos
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            if not select.select([stream], [], [], left)[0]:
                return False
            chunk = os.read(stream, 65536)
            if not chunk:
                raise SystemExit("edge-bench: the daemon closed the socket")
            buffer += chunk
            hit = False
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                arrived, text = line.decode().split(" ", 1)
                if '"event": "capture"' in text and '"phase": "began"' in text:
                    began.append((field(text, "pressedAt"), field(text, "t"), int(arrived)))
                if '"event": "photo"' in text:
                    photos += 1
                if until and until(text):
                    hit = True
            if hit:
                return True

    read_for(2, lambda line: '"ok"' in line)
    missed = 0
    for index in range(presses):
        pull(sim_dir, 0, True)
        read_for(0.06)
        count = len(began)
        pull(sim_dir, 1, True)
        if not read_for(3, lambda line: '"phase": "began"' in line):
            missed += 1
        read_for(5, lambda line: '"event": "photo"' in line or '"captureFailed"' in line)
        read_for(0.06)
        pull(sim_dir, 1, False)
        read_for(0.06)
        pull(sim_dir, 0, False)
        read_for(0.06)
        for probe in probes:
            pull(sim_dir, probe, index % 2 == 0)
            read_for(0.06)
        if len(began) == count:
            print(f"edge-bench: press {index + 1}: no capture began", file=sys.stderr)
    subscriber.kill()
    with open(out_path, "w") as out:
        for pressed, decided, arrived in began:
            out.write(f"{pressed} {decided} {arrived}\n")
    print(f"edge-bench: {presses} clicks, {len(began)} capture began lines, {photos} photos, {missed} missed")


def percentile(values, p):
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = max(0, min(len(ordered) - 1, int(-(-len(ordered) * p // 1)) - 1))
    return ordered[index]


def analyse(window_ms, daemon_path, raw_path, gpiomon_path, windowed_path, tsv_path, tag=""):
    window = float(window_ms)

    def rows(path):
        try:
            with open(path) as f:
                return [line.split() for line in f if line.strip()]
        except FileNotFoundError:
            return []

    # ms figures
    samples = rows(daemon_path)
    daemon = [(int(r[2]) - int(r[0])) / 1e6 for r in samples]
    beyond = [d - window for d in daemon]
    decided = [(int(r[1]) - int(r[0])) / 1e6 for r in samples]
    raw = [(int(r[2]) - int(r[1])) / 1e6 for r in rows(raw_path) if len(r) >= 3]
    gpiomon = []
    for r in rows(gpiomon_path):   # ARRIVED EVENT SECONDS NANOSECONDS (1.6 prints ns unpadded)
        if len(r) >= 4:
            gpiomon.append((int(r[0]) - (int(r[2]) * 1_000_000_000 + int(r[3]))) / 1e6)
    late = [(int(r[3]) - int(r[1])) / 1e6 - window for r in rows(windowed_path) if len(r) >= 4]
    # edge-floor --hop: the same wake-up's line written to a socket, stamped by another process.
    hopped = [(int(r[4]) - int(r[1])) / 1e6 - window for r in rows(windowed_path) if len(r) >= 5]

    def fig(values, p):
        return percentile(values, p) if values else float("nan")

    def ratio(a, b):
        return a / b if b and b == b and a == a and b > 0 else float("nan")

    lines = []

    def row(name, value, peer, peer_value):
        if tag:
            name += f" [{tag}]"
        lines.append(f"edge→event\t{name}\t{value:.3f}\tms\t{peer}\t{peer_value:.3f}\t{ratio(value, peer_value):.2f}")

    print(f"edge → event on gpio-sim ({len(daemon)} presses; window {window:g} ms; "
          f"floor samples: raw {len(raw)}, gpiomon {len(gpiomon)}, windowed {len(late)})")
    print(f"  decision (t) − pressedAt: p50 {fig(decided, 0.5):.3f} ms, max {max(decided, default=float('nan')):.3f} ms")
    for label, p in (("p50", 0.5), ("p99", 0.99)):
        print(f"  {label}: shutter edge → subscriber {fig(daemon, p):.3f} ms, beyond the window {fig(beyond, p):.3f} ms; "
              f"C reader raw {fig(raw, p):.3f} ms; gpiomon {fig(gpiomon, p):.3f} ms; "
              f"C timer floor late {fig(late, p):.3f} ms; beyond/floor {ratio(fig(beyond, p), fig(late, p)):.2f}×"
              + (f"; C timer + a socket to another process {fig(hopped, p):.3f} ms, beyond/that {ratio(fig(beyond, p), fig(hopped, p)):.2f}×" if hopped else ""))
        row(f"edge → subscriber, raw {label} (gpio-sim, VM)", fig(daemon, p), f"C reader edge → read {label}", fig(raw, p))
        row(f"edge → subscriber, beyond the {window:g} ms window {label}", fig(beyond, p),
            f"C timer at edge + window, late {label}", fig(late, p))
        if hopped:
            row(f"edge → subscriber, beyond the {window:g} ms window {label}", fig(beyond, p),
                f"C timer at edge + window, then a socket to another process {label}", fig(hopped, p))
        row(f"gpiomon edge → line {label} (peer)", fig(gpiomon, p), f"C reader edge → read {label}", fig(raw, p))
    with open(tsv_path, "a") as tsv:
        for line in lines:
            tsv.write(line + "\n")
    goals = fig(beyond, 0.5) <= 1.5 * fig(late, 0.5) and fig(beyond, 0.99) <= 2 * fig(late, 0.99)
    print(f"  goal (beyond ≤ 1.5× floor at p50, ≤ 2× at p99): {'met' if goals else 'missed'}")
    return bool(daemon and raw and gpiomon and late and hopped)


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "drive" and len(sys.argv) >= 7:
        drive(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6], [int(x) for x in sys.argv[7:]])
    elif mode == "analyse" and len(sys.argv) in (8, 9):
        sys.exit(0 if analyse(*sys.argv[2:9]) else 1)
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
