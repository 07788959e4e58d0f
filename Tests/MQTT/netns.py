#!/usr/bin/env python3
"""netns.py - the poor-network rig of Tests/MQTT/test-netns.sh (run that; this needs root, veth and
sch_netem, which the VM guest has).

  netns.py [--plumbing] [--keep]     --plumbing: the network alone; --keep: leave the namespaces
  netns.py --help

Namespaces (names end in this process's id): shm-brk-PID holds the broker; shm-nN-PID holds node
nN (N = 1, 2, 3), joined to the broker's by a veth pair: 10.231.N.1/24 on the broker's end,
10.231.N.2/24 on the node's. Link 1 is poor (netem delay 40 ms 30 ms, loss 2 %, both directions);
link 3 is blipped three times for 150 ms (what goes to n3 lost) with a press at the end of each
(its shot then arrives by TCP retransmission while n3's 16-frame ring still holds the instant),
then cut for 10 s (netem loss 100 %, both directions); link 2 is clean. On a failure the nodes' logs go to $ARTIFACTS (default
.build/artifacts/mqtt-netns in the checkout, which the VM shares).
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import json

sys.dont_write_bytecode = True  # no __pycache__ in the checkout
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rig  # noqa: E402

NODES = ("n1", "n2", "n3")
POOR = "n1"
CUT = "n3"
CLEAN = "n2"
PORT = 1883
FRAME_MS = 1000.0 / 30  # the synthetic camera's frame interval
POOR_NETEM = ["delay", "40ms", "30ms", "loss", "2%"]
CUT_SECONDS = 10


def sh(*args, check=True):
    r = subprocess.run(list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: exit {r.returncode}: {r.stderr.strip()}")
    return r


class Net:
    def __init__(self):
        suffix = str(os.getpid())
        self.broker_ns = f"shm-brk-{suffix}"
        self.ns = {n: f"shm-{n}-{suffix}" for n in NODES}
        self.index = {n: i + 1 for i, n in enumerate(NODES)}
        self.made = []

    def broker_addr(self, node):
        return f"10.231.{self.index[node]}.1"

    def node_addr(self, node):
        return f"10.231.{self.index[node]}.2"

    def dev(self, node, side):  # side: "b" (in the broker's namespace) or "n"
        return f"v{side}{self.index[node]}"

    def wrap(self, node=None):
        return ["ip", "netns", "exec", self.ns[node] if node else self.broker_ns]

    def up(self):
        for name in [self.broker_ns] + list(self.ns.values()):
            sh("ip", "netns", "add", name)
            self.made.append(name)
            sh("ip", "-n", name, "link", "set", "lo", "up")
        for node in NODES:
            b, n = self.dev(node, "b"), self.dev(node, "n")
            sh("ip", "link", "add", b, "netns", self.broker_ns, "type", "veth", "peer", "name", n, "netns", self.ns[node])
            sh("ip", "-n", self.broker_ns, "addr", "add", f"{self.broker_addr(node)}/24", "dev", b)
            sh("ip", "-n", self.ns[node], "addr", "add", f"{self.node_addr(node)}/24", "dev", n)
            sh("ip", "-n", self.broker_ns, "link", "set", b, "up")
            sh("ip", "-n", self.ns[node], "link", "set", n, "up")

    def netem(self, node, params, ends="bn"):
        """netem PARAMS on node's link at its ends `ends` (b: the broker's, what goes to the node;
        n: the node's, what comes from it); None removes it."""
        for end in ends:
            ns, dev = (self.broker_ns, self.dev(node, "b")) if end == "b" else (self.ns[node], self.dev(node, "n"))
            if params is None:
                sh("tc", "-n", ns, "qdisc", "del", "dev", dev, "root", check=False)
            else:
                sh("tc", "-n", ns, "qdisc", "replace", "dev", dev, "root", "netem", *params)

    def switch(self, node):
        """A tc kept running in the broker's namespace (`tc -batch`), to drop and restore what goes
        to node at once: a `tc` process per change took 250-450 ms to start on a loaded 2-core
        machine, longer than TCP's first retransmission. Returns (cut(), restore(), close())."""
        tc = subprocess.Popen(["tc", "-n", self.broker_ns, "-force", "-batch", "-"], stdin=subprocess.PIPE,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
        dev = self.dev(node, "b")

        def send(line):
            tc.stdin.write(line + "\n")
            tc.stdin.flush()

        def close():
            tc.stdin.close()
            tc.wait(timeout=10)
        return (lambda: send(f"qdisc replace dev {dev} root netem loss 100%"),
                lambda: send(f"qdisc del dev {dev} root"), close)

    def qdisc(self, node):
        return sh("ip", "netns", "exec", self.broker_ns, "tc", "qdisc", "show", "dev", self.dev(node, "b")).stdout.strip()

    def down(self):
        for name in reversed(self.made):
            sh("ip", "netns", "del", name, check=False)
        self.made = []


class NodeBroker:
    """How a node in its namespace reaches the broker: the broker's address on its link."""

    def __init__(self, broker, net, node):
        self.host, self.port = net.broker_addr(node), broker.port
        self.user, self.password, self.users = broker.user, broker.password, broker.users
        self.wrap = net.wrap(node)

    client_args = rig.Broker.client_args


def one_way_delays(checks, net, broker, node, count=20):
    """Messages published in the broker's namespace, received there and in node's: the difference
    of the two receive times is the broker → node delay (one clock: the same machine)."""
    topic = f"rt/{node}/{uuid.uuid4().hex[:8]}"
    local = rig.Sub(broker, [topic + "/#"], ready_timeout=30)
    remote = rig.Sub(NodeBroker(broker, net, node), [topic + "/#"], ready_timeout=60)
    for i in range(count):
        rig.publish(broker, f"{topic}/{i}", str(i), qos=1)
        # Apart, so each message measures the link, not the queue of the ones before it: sent
        # back to back on the poor link they arrived 33, 37, 46 … 551 ms late, the p50 161 ms.
        time.sleep(0.1)
    remote.wait(lambda ms: len(ms) >= count or None, 30)
    here = {m.topic: m.time for m in local.snapshot()}
    there = {m.topic: m.time for m in remote.snapshot()}
    local.stop()
    remote.stop()
    delays = sorted((there[t] - here[t]) * 1000 for t in there if t in here)
    return delays, len(there)


def plumbing(checks, net, broker):
    for node in NODES:
        r = sh("ip", "-n", net.ns[node], "-br", "addr", "show", net.dev(node, "n"))
        checks.check(f"netns: {net.ns[node]} has {net.dev(node, 'n')} up with {net.node_addr(node)}",
                     net.node_addr(node) in r.stdout and ("UP" in r.stdout or "UNKNOWN" in r.stdout), r.stdout)
    net.netem(POOR, POOR_NETEM)
    q = net.qdisc(POOR)
    checks.check(f"netem on {POOR}'s link: {q}", "netem" in q and "delay 40" in q and "loss 2%" in q, q)
    for node in NODES:
        nb = NodeBroker(broker, net, node)
        rc, err = rig.publish(nb, "rig-test/reach", node, qos=1)
        checks.check(f"{node} reaches the broker at {nb.host}:{nb.port} (mosquitto_pub from its namespace)", rc == 0, err)
    rc, err = rig.publish(broker, "rig-test/x", "x", wrap=net.wrap(CLEAN), qos=0, timeout=30)  # n1's link from n2
    checks.check(f"{CLEAN}'s namespace cannot reach {broker.host} (another node's link; mosquitto_pub exit {rc})", rc != 0)
    figures = {}
    for node in (CLEAN, POOR):
        delays, got = one_way_delays(checks, net, broker, node)
        if not delays:
            checks.check(f"round trip to {node}: messages arrive", False)
            continue
        p50 = statistics.median(delays)
        figures[node] = (p50, delays[0], delays[-1], got)
        if node == POOR:
            ok = 10 <= p50 <= 120 and got == 20
        else:
            ok = p50 < 20 and got == 20
        checks.check(f"broker → {node} one-way delay: p50 {p50:.1f} ms, min {delays[0]:.1f}, max {delays[-1]:.1f} "
                     f"({got}/20 QoS 1 messages)", ok, delays)
    # The cut: nothing gets through for the cut's length, then the link and the session recover.
    sub = rig.Sub(NodeBroker(broker, net, CUT), ["cut/#"], ready_timeout=60)
    net.netem(CUT, ["loss", "100%"])
    t_cut = time.time()
    rig.publish(broker, "cut/during", "x", qos=1)
    got = sub.wait(lambda ms: ms or None, 3)
    checks.check(f"{CUT}'s link cut (netem loss 100 %): a message to it does not arrive in 3 s", not got, got)
    time.sleep(max(0, 5 - (time.time() - t_cut)))
    net.netem(CUT, None)
    t_back = time.time()
    got = sub.wait(lambda ms: ms or None, 30)
    checks.check(f"{CUT}'s link back after {t_back - t_cut:.1f} s: the message sent during the cut arrives "
                 f"{(got[0].time - t_back) * 1000:.0f} ms later (TCP retransmission)" if got else
                 f"{CUT}'s link back: the message sent during the cut arrives", got)
    sub.stop()
    return figures


# ---------------------------------------------------------------- the daemons


def shot_results(sub, prefix, shot):
    out = {}
    for m in sub.snapshot(prefix=prefix):
        parts = m.topic.split("/")
        if len(parts) >= 2 and parts[-2] == "shot" and parts[-1] == shot:
            out.setdefault(parts[-3], []).append(m.json())
    return out


def daemons(checks, net, broker, work):
    rigname, prefix = "poor", "shutter"
    nodes = {}
    for name in NODES:
        board = rig.board_for(work, name, NodeBroker(broker, net, name), rig=rigname, prefix=prefix,
                              mqtt={"keepAliveS": 30, "shotTimeoutMs": 4000, "discovery": False},
                              camera={"width": 160, "height": 120, "ringFrames": 16})
        nodes[name] = rig.Node(name, board, work, wrap=net.wrap(name))
    sub = rig.Sub(broker, [f"{prefix}/{rigname}/#"], ready_timeout=30)
    for node in nodes.values():
        node.start(timeout=60)
    online = sub.wait(lambda ms: all(any(m.topic == f"{prefix}/{rigname}/{n}/availability" and m.text == "online"
                                         for m in ms) for n in NODES) or None, 60)
    checks.check("daemons: the three nodes are online through their links", online,
                 "\n".join(f"{n}: {node.stderr_tail(3)}" for n, node in nodes.items()))
    # Under emulation on a loaded machine a daemon's camera took a minute to stream: wait for it.
    t0 = time.time()
    ready = rig.wait_until(lambda: all(n.snapshot("cameraReady") for n in nodes.values()), 180)
    checks.check(f"daemons: every node's camera streams ({time.time() - t0:.0f} s after online)", ready,
                 {n: [e.get("event") for e in node.snapshot()] for n, node in nodes.items()})
    shots = []  # (shot id, phase)

    def press(origin, phase):
        try:
            reply = nodes[origin].request({"id": f"{phase}-{len(shots)}", "cmd": "capture", "rig": True}, timeout=30)
        except OSError as e:  # a timeout too: counted as a press without a shot
            reply = {"error": f"{type(e).__name__}: {e}"}
        shot = reply.get("shot") if isinstance(reply, dict) else None
        if not shot:  # the id is on the origin's shot event
            ev = nodes[origin].wait_event(lambda e: e.get("event") == "shot" and e.get("origin") == origin
                                          and e.get("shot") not in [s[0] for s in shots], 10)
            shot = ev and ev.get("shot")
        if not shot:
            checks.note(f"press on {origin} ({phase}): no shot: {json.dumps(reply)[:200]}")
        shots.append((shot, phase, origin))
        return shot

    # Phase 1: the poor link on, everything connected; presses on the clean and the poor node.
    net.netem(POOR, POOR_NETEM)
    for i in range(6):
        press(CLEAN if i % 2 == 0 else POOR, "poor")
        time.sleep(1.5)
    # Phase 2: short blips (150 ms) on link 3, a press at the end of each: TCP's first
    # retransmission (200 ms, the minimum RTO) brings the shot while n3's ring (16 frames, 533 ms)
    # still holds the frame exposing at the instant, if the link is back by then. So the link
    # comes back as soon as the shot has left the origin: a link down past 200 ms backs the
    # retransmission off to 600 ms, past the ring. Before the cut: after it, the connection's
    # retransmission timeout still carries the cut's backoff. Only what goes to n3 is lost (the
    # shot's message): one tc to undo.
    cut, restore, close = net.switch(CUT)
    for i in range(3):
        cut()
        time.sleep(0.15)
        q = net.qdisc(CUT)
        checks.check(f"blip {i + 1}: what goes to {CUT} is dropped ({q})", "loss 100%" in q, q)
        before = {e.get("shot") for e in nodes[CLEAN].snapshot() if e.get("event") == "shot"}
        presser = threading.Thread(target=press, args=(CLEAN, "blip"))
        presser.start()
        # The shot leaves the origin at the press; the press's reply waits for the origin's own
        # photo (hundreds of ms under emulation): the link comes back once the shot is out.
        out = rig.wait_until(lambda: any(e.get("event") == "shot" and e.get("shot") not in before
                                         for e in nodes[CLEAN].snapshot()), 10, interval=0.005)
        seen = time.time()
        restore()
        presser.join()
        checks.note(f"blip {i + 1}: the link to {CUT} restored {'as the shot was seen leaving the origin' if out else 'after 10 s without the shot'}"
                    f" ({(time.time() - seen) * 1000:.0f} ms until the press's reply)")
        time.sleep(2)
    close()
    # Phase 3: link 3 cut for 10 s; a press a second on n2.
    net.netem(CUT, ["loss", "100%"])
    t_cut = time.time()
    while time.time() - t_cut < CUT_SECONDS - 1:
        press(CLEAN, "cut")
        time.sleep(1.0)
    time.sleep(max(0, CUT_SECONDS - (time.time() - t_cut)))
    net.netem(CUT, None)
    # Phase 4: back. With the default keepalive (30 s) the session outlives a 10 s cut (no last will,
    # no reconnect): n3 is back when it answers a status request on its cmd topic again.
    t_back = time.time()
    back = None
    while back is None and time.time() - t_back < 60:
        rig.publish(broker, f"{prefix}/{rigname}/{CUT}/cmd", json.dumps({"id": "back", "cmd": "status"}), qos=1)
        back = sub.wait(lambda ms: next((m for m in ms if m.topic == f"{prefix}/{rigname}/{CUT}/reply"
                                         and (m.json() or {}).get("id") == "back"), None), 5)
    will = [m for m in sub.snapshot(f"{prefix}/{rigname}/{CUT}/availability") if m.time > t_cut and m.text == "offline"]
    checks.check(f"{CUT} answers on its cmd topic {back.time - t_back:.1f} s after its link comes back "
                 f"({'its last will was published' if will else 'its session outlived the cut'})" if back else
                 f"{CUT} answers on its cmd topic after its link comes back", back)
    for i in range(4):
        press(CLEAN if i % 2 == 0 else CUT, "after")
        time.sleep(1.5)
    time.sleep(6)

    missing_ids = [s for s in shots if not s[0]]
    checks.check(f"every press published a shot ({len(shots)} presses)", not missing_ids, missing_ids)
    spreads = []
    offsets = []
    cut_answers = {"photo": 0, "missed": 0, "none": 0, "unpublished": 0}
    blip_answers = {"photo": 0, "missed": 0, "none": 0}
    poor_answers = {"photo": 0, "too late": 0, "other": 0}
    all_answers = {"photo": 0, "too late": 0, "other": 0}

    def node_events(shot):  # each node's own lines for the shot: photo (bracketMs, frameIntervalMs), shotMissed
        out = {}
        for n, node in nodes.items():
            for e in node.snapshot():
                if e.get("shot") == shot and e.get("event") in ("photo", "shotMissed", "captureFailed"):
                    out[n] = {k: e.get(k) for k in ("event", "offsetMs", "bracketMs", "frameIntervalMs", "reason")
                              if k in e}
        return out
    for shot, phase, origin in shots:
        if not shot:
            continue
        res = shot_results(sub, f"{prefix}/{rigname}/", shot)
        twice = {n: len(r) for n, r in res.items() if len(r) > 1}
        checks.check(f"shot {shot[:8]} ({phase}, origin {origin}): one result per node", not twice, twice)
        reachable = [n for n in NODES if not (phase == "cut" and n == CUT)]
        photos = {n: r[0] for n, r in res.items() if r and r[0] and r[0].get("result") == "photo"}
        frame_ats = [p["frameAt"] for n, p in photos.items() if n in reachable and "frameAt" in p]
        spread = (max(frame_ats) - min(frame_ats)) / 1e6 if len(frame_ats) > 1 else 0.0
        offs = [abs(p.get("offsetMs", 1e9)) for n, p in photos.items() if n in reachable]
        offsets += offs
        if len(frame_ats) == len(reachable):
            spreads.append(spread)
        if phase == "blip":
            reachable = [n for n in NODES if n != CUT]
        events = node_events(shot)
        # One frame interval: the synthetic camera's 33.3 ms, or, when emulation stretched it, the
        # longest interval between the frames around the instant that a node's photo line gives
        # (bracketMs; Tests/VM/lib.sh's within_own_interval takes each photo's own the same way).
        brackets = [e["bracketMs"] for n, e in events.items() if n in photos and isinstance(e.get("bracketMs"), (int, float))]
        interval = max([FRAME_MS] + brackets)
        # The poor link loses 2 % of its packets: a shot's message lost there (to the poor node,
        # or from it when it is the origin, to every node) comes by TCP's retransmission,
        # sometimes after a node's ring (533 ms) let the instant's frame go, and then that node's
        # right answer is that it missed it (counted below: most must be photos). So may the cut
        # node's, whose link just came back with TCP's backlog; never a later frame.
        too_late = {n for n, e in events.items() if n not in photos and e.get("event") == "shotMissed"
                    and "too late for the ring" in str(e.get("reason"))}
        if POOR in reachable:
            poor_answers["photo" if POOR in photos else "too late" if POOR in too_late else "other"] += 1
        for n in reachable:
            all_answers["photo" if n in photos else "too late" if n in too_late else "other"] += 1
        checks.check(f"shot {shot[:8]} ({phase}): a photo on every reachable node {sorted(reachable)} "
                     f"(got {sorted(photos)}{', too late for its ring: ' + ', '.join(sorted(too_late)) if too_late else ''}), "
                     f"spread {spread:.1f} ms ≤ one frame interval ({interval:.1f} ms), |offset| ≤ one frame",
                     all(n in photos or n in too_late for n in reachable) and spread <= interval + 0.5
                     and all(o <= interval + 0.5 for o in offs),
                     "each node's own line: " + json.dumps(events) + "\nresults: " + json.dumps(res)[:1200])
        if phase in ("cut", "blip"):
            r = (res.get(CUT) or [None])[0]
            kind = r.get("result") if r else "none"
            tally = cut_answers if phase == "cut" else blip_answers
            if kind == "none" and phase == "cut" and CUT in events:
                kind = "unpublished"  # n3 answered on its stdout, the result never reached the broker
            tally[kind if kind in tally else "none"] += 1
            if phase == "blip" and kind == "missed":
                checks.note(f"shot {shot[:8]} (blip): {CUT} missed it: {r.get('reason')}")
            if r and kind == "photo":
                checks.check(f"shot {shot[:8]}: {CUT}, cut, answers a photo only of the pressed instant "
                             f"(offset {r.get('offsetMs')} ms)", abs(r.get("offsetMs", 1e9)) <= FRAME_MS + 0.5, r)
    checks.check(f"{CUT} (cut {CUT_SECONDS} s) answered the shots of the cut: {cut_answers['photo']} photo (its ring still "
                 f"held them), {cut_answers['missed']} missed, {cut_answers['none']} never delivered to it, "
                 f"{cut_answers['unpublished']} answered but not published",
                 cut_answers["missed"] + cut_answers["photo"] > 0 and cut_answers["unpublished"] == 0, cut_answers)
    checks.check(f"{POOR} behind its poor link: {poor_answers['photo']} photos, {poor_answers['too late']} shots "
                 f"too late for its ring (of {sum(poor_answers.values())})",
                 poor_answers["photo"] >= 2 * poor_answers["too late"] and poor_answers["other"] == 0, poor_answers)
    checks.check(f"every reachable node's answers: {all_answers['photo']} photos, {all_answers['too late']} too late for "
                 f"its ring (of {sum(all_answers.values())})",
                 all_answers["photo"] >= 4 * all_answers["too late"] and all_answers["other"] == 0, all_answers)
    checks.check(f"{CUT} behind 150 ms blips answered from its ring: {blip_answers['photo']} photo, "
                 f"{blip_answers['missed']} missed, {blip_answers['none']} unanswered (of 3)",
                 blip_answers["photo"] > 0 and blip_answers["none"] == 0, blip_answers)
    for name, node in nodes.items():
        files = node.photos_on_disk()
        ids = [f.split("/")[0] for f in files]
        dup = {i for i in ids if ids.count(i) > 1}
        checks.check(f"{name}: nothing taken twice ({len(files)} photos on disk, no shot twice)", not dup, dup)
        checks.check(f"{name}: still running", node.alive(), node.stderr_tail())
    for node in nodes.values():
        node.stop()
    sub.stop()
    figures = {}
    if spreads:
        figures["spread"] = (statistics.median(spreads), max(spreads), len(spreads))
        checks.note(f"spread (max − min frameAt over reachable nodes): p50 {statistics.median(spreads):.2f} ms, "
                    f"max {max(spreads):.2f} ms over {len(spreads)} shots")
    if offsets:
        checks.note(f"|offsetMs|: p50 {statistics.median(offsets):.2f} ms, max {max(offsets):.2f} ms")
    return figures


def main(argv):
    if "-h" in argv or "--help" in argv:
        print(__doc__.strip())
        return 0
    only_plumbing = "--plumbing" in argv
    checks = rig.Checks("mqtt")
    if os.getuid() != 0:
        print("skip - netns.py needs root (network namespaces); run Tests/MQTT/test-netns.sh (it uses the VM)")
        print("mqtt: 0 passed, 0 failed")
        return 0
    missing = rig.tools_missing()
    if missing:
        print(f"mqtt: not installed: {' '.join(missing)}", file=sys.stderr)
        return 1
    probe = sh("tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "0ms", check=False)
    if probe.returncode != 0:
        checks.check(f"this kernel has sch_netem ({probe.stderr.strip()}); run test-netns.sh without --here (the VM)", False)
        return checks.finish()
    sh("tc", "qdisc", "del", "dev", "lo", "root", check=False)
    net = Net()
    work = tempfile.mkdtemp(prefix="shutter-netns-")
    broker = None
    try:
        net.up()
        listeners = "".join(f"listener {PORT} {net.broker_addr(n)}\n" for n in NODES[1:])
        broker = rig.Broker(work, host=net.broker_addr(NODES[0]), port=PORT, wrap=net.wrap(), extra_config=listeners)
        broker.start(timeout=30)
        checks.check(f"broker: mosquitto in {net.broker_ns} on port {PORT} of {', '.join(net.broker_addr(n) for n in NODES)}",
                     broker.pid is not None)
        figures = plumbing(checks, net, broker)
        for node, (p50, lo, hi, got) in figures.items():
            checks.note(f"broker → {node}: one-way p50 {p50:.1f} ms (min {lo:.1f}, max {hi:.1f}, {got}/20)")
        if only_plumbing:
            pass
        else:
            ok, why = rig.shutter_supports_mqtt()
            if not ok:
                checks.skip(f"the daemons on the poor network: {why}")
            else:
                net.netem(POOR, None)
                net.netem(CUT, None)
                daemons(checks, net, broker, work)
    except Exception as e:
        checks.check(f"netns rig ran to its end ({type(e).__name__}: {e})", False, broker.log_tail() if broker else "")
    finally:
        if broker:
            broker.kill()
        if "--keep" not in argv:
            net.down()
        if checks.failed:  # the nodes' event lines and stderr, the broker's log: into the checkout (the VM's share)
            dest = os.environ.get("ARTIFACTS") or os.path.join(rig.ROOT, ".build", "artifacts", "mqtt-netns")
            shutil.copytree(work, dest, dirs_exist_ok=True, ignore=shutil.ignore_patterns("*.jpg", "*.sock"))
            checks.note(f"logs: {dest}")
        shutil.rmtree(work, ignore_errors=True)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
