#!/usr/bin/env python3
"""bench-scale.py - a rig at scale on one machine (issue 22): N `shutter run` nodes on the simulator
board and one mosquitto broker on a loopback port; S shots, every node answers each.

  SHUTTER=.build/debug/shutter python3 Tests/MQTT/bench-scale.py [--nodes 50] [--shots 20] [--keep]
  python3 Tests/MQTT/bench-scale.py --nodes 5 --shots 3      the short run CI does
  python3 Tests/MQTT/bench-scale.py --help

Each shot is `{"cmd":"capture","rig":true}` on one node's socket (the origin turns round the
nodes); the next starts once every node has answered (or after 15 s) and 0.3 s more. Prints:
  - press → last result: from the shot's `at` (CLOCK_REALTIME of the press, as published) to the
    receive time of the last node's result on P/R/N/shot/<id> at a mosquitto_sub (same clock),
    p50 / p99 / max over the shots; and press → shotComplete on the origin's standard output
  - spread (max − min frameAt) p50 / max
  - CPU (utime + stime from /proc/PID/stat) of the broker and the nodes, idle (the nodes streaming
    the synthetic camera, no shots) and during the shots, as a percentage of one core
One line per check ("ok - ..." / "FAIL - ..."): every node online, every shot answered by every
node with a photo; then "mqtt: N passed, M failed"; exit 1 on a failure. The camera is 160x120 so
that the synthetic frames of 50 nodes do not swamp a 2-core machine.
"""
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the checkout
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rig  # noqa: E402

RIG, PREFIX = "scale", "shutter"


def arg(argv, name, default):
    if name in argv:
        return int(argv[argv.index(name) + 1])
    return default


def pct(values, p):
    values = sorted(values)
    if not values:
        return float("nan")
    k = (len(values) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def cpu_snapshot(broker, nodes):
    return time.monotonic(), broker.cpu_ticks() or 0, {n.name: n.cpu_ticks() or 0 for n in nodes}


def cpu_report(checks, label, a, b):
    dt = b[0] - a[0]
    broker = (b[1] - a[1]) / rig.CLOCK_TICKS / dt * 100
    per_node = [(b[2][k] - a[2].get(k, 0)) / rig.CLOCK_TICKS / dt * 100 for k in b[2]]
    checks.note(f"CPU {label} ({dt:.1f} s): broker {broker:.1f} % of a core; nodes total {sum(per_node):.1f} %, "
                f"per node mean {statistics.mean(per_node):.2f} %, max {max(per_node):.2f} %")
    return broker, sum(per_node), statistics.mean(per_node)


def main(argv):
    if "-h" in argv or "--help" in argv:
        print(__doc__.strip())
        return 0
    count = arg(argv, "--nodes", 50)
    shots = arg(argv, "--shots", 20)
    missing = rig.tools_missing()
    if missing:
        print(f"mqtt: not installed: {' '.join(missing)}", file=sys.stderr)
        return 1
    ok, why = rig.shutter_supports_mqtt()
    if not ok:
        print(f"skip - the scale bench: {why}")
        print("mqtt: 0 passed, 0 failed")
        return 1 if os.environ.get("CI") else 0
    checks = rig.Checks("mqtt")
    work = tempfile.mkdtemp(prefix="shutter-scale-")
    broker = rig.Broker(work)
    nodes = []
    sub = None
    try:
        broker.start()
        sub = rig.Sub(broker, [f"{PREFIX}/{RIG}/#"])
        t0 = time.time()
        for i in range(count):
            name = f"n{i:02d}"
            board = rig.board_for(work, name, broker, rig=RIG, prefix=PREFIX,
                                  mqtt={"discovery": False, "shotTimeoutMs": 10000},
                                  camera={"width": 160, "height": 120})
            nodes.append(rig.Node(name, board, work).start(wait_socket=False))
        for n in nodes:
            rig.wait_until(lambda: os.path.exists(n.socket_path) or not n.alive(), 60)

        def online(ms):
            on = {m.topic.split("/")[2] for m in ms if m.topic.endswith("/availability") and m.text == "online"}
            return on if len(on) >= count else None
        on = sub.wait(online, 120)
        got = online(sub.snapshot()) or {m.topic.split("/")[2] for m in sub.snapshot()
                                         if m.topic.endswith("/availability") and m.text == "online"}
        checks.check(f"{count} nodes online in {time.time() - t0:.1f} s ({len(got)})", on is not None,
                     [n.name for n in nodes if n.name not in got][:10])
        time.sleep(2)
        idle_a = cpu_snapshot(broker, nodes)
        time.sleep(5)
        idle_b = cpu_snapshot(broker, nodes)
        cpu_report(checks, "idle", idle_a, idle_b)

        latencies, completes, spreads, incomplete, offsets = [], [], [], [], []
        run_a = cpu_snapshot(broker, nodes)
        seen = set()
        for k in range(shots):
            origin = nodes[k % count]
            t_req = time.time()
            reply = origin.request({"id": f"scale-{k}", "cmd": "capture", "rig": True}, timeout=20)
            ev = origin.wait_event(lambda e: e.get("event") == "shot" and e.get("origin") == origin.name
                                   and e.get("shot") not in seen, 10)
            if not ev:
                incomplete.append((k, "no shot event", reply))
                continue
            shot = ev["shot"]
            seen.add(shot)
            suffix = f"/shot/{shot}"

            def answers(ms):
                got = {}
                for m in ms:
                    if m.topic.endswith(suffix):
                        got.setdefault(m.topic.split("/")[2], m)
                return got if len(got) >= count else None
            res = sub.wait(answers, 15) or answers(sub.snapshot()) or {}
            if not res:
                res = {}
                for m in sub.snapshot():
                    if m.topic.endswith(suffix):
                        res.setdefault(m.topic.split("/")[2], m)
            photos = {n: m.json() for n, m in res.items() if (m.json() or {}).get("result") == "photo"}
            if len(photos) < count:
                incomplete.append((k, f"{len(photos)}/{count} photos, {len(res)} answers", None))
            at = ev.get("at") / 1e9 if isinstance(ev.get("at"), int) else t_req
            if res:
                latencies.append((max(m.time for m in res.values()) - at) * 1000)
            offsets += [abs(p["offsetMs"]) for p in photos.values() if isinstance(p.get("offsetMs"), (int, float))]
            fa = [p["frameAt"] for p in photos.values() if isinstance(p.get("frameAt"), int)]
            if len(fa) > 1:
                spreads.append((max(fa) - min(fa)) / 1e6)
            ce = origin.wait_event(lambda e: e.get("event") == "shotComplete" and e.get("shot") == shot, 12)
            if ce:
                completes.append((ce["_rx"] - at) * 1000)
            time.sleep(0.3)
        run_b = cpu_snapshot(broker, nodes)
        checks.check(f"every node answered each of {shots} shots with a photo", not incomplete, incomplete[:10])
        alive = [n.name for n in nodes if not n.alive()]
        checks.check("every node still runs", not alive, alive)
        if latencies:
            checks.note(f"press → last result ({count} nodes, {len(latencies)} shots): p50 {pct(latencies, 50):.1f} ms, "
                        f"p99 {pct(latencies, 99):.1f} ms, max {max(latencies):.1f} ms")
        if completes:
            checks.note(f"press → shotComplete on the origin's stdout: p50 {pct(completes, 50):.1f} ms, "
                        f"p99 {pct(completes, 99):.1f} ms")
        if spreads:
            checks.note(f"spread (max − min frameAt): p50 {pct(spreads, 50):.2f} ms, max {max(spreads):.2f} ms")
        if offsets:
            far = len([o for o in offsets if o > 1000 / 30])
            checks.note(f"|offsetMs| (frame − press) over {len(offsets)} photos: p50 {pct(offsets, 50):.1f} ms, "
                        f"p99 {pct(offsets, 99):.1f} ms, max {max(offsets):.1f} ms; {far} beyond one frame (33.3 ms)")
        with open("/proc/loadavg") as f:
            checks.note(f"load average at the end: {' '.join(f.read().split()[:3])} ({os.cpu_count()} CPUs)")
        cpu_report(checks, "during the shots", run_a, run_b)
        counts = [len(n.photos_on_disk()) for n in nodes]
        checks.check(f"nothing taken twice: {shots} photos per node (min {min(counts)}, max {max(counts)})",
                     all(c <= shots for c in counts), counts)
    except Exception as e:
        import traceback
        checks.check(f"bench ran to its end ({type(e).__name__}: {e})", False, traceback.format_exc())
    finally:
        for n in nodes:
            if n.alive():
                n.process.terminate()
        for n in nodes:
            n.stop()
        if sub:
            sub.stop()
        broker.stop()
        if "--keep" in argv:
            checks.note(f"kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
