#!/usr/bin/python3
"""bench-idle.py - what shutter costs a small board while it waits, and its size (host, release).

  Tests/bench-idle.py [--shutter BINARY] [--seconds S] [--tsv FILE] [--threads]
  Tests/bench-idle.py --help

Runs `shutter run --no-state` (default .build/release/shutter; build it with
`swift build -c release`) on copies of Boards/simulator.json in three modes, one after the other:
  streaming   the synthetic camera streams into the zero-shutter-lag ring (1280x720 YUYV, 30 fps)
  stopped     camera.keepStreaming false: the low-power mode, the camera stopped between shots;
              twice: from start-up, and after one shot (`shutter ctl --wait capture`) and its stop
  no camera   camera.device a V4L2 node that does not exist (the daemon starts and looks for it)
Each daemon gets a NOTIFY_SOCKET (a datagram socket this script reads, as systemd would) and no
WATCHDOG_USEC, and Deploy/vm/malloc-count.c preloaded (its live counter). After READY=1 and S/5
seconds to settle, over S idle seconds (default 10):
  CPU time        utime + stime of every thread (/proc/PID/task/*/stat)
  wake-ups        voluntary context switches of every thread (/proc/PID/task/*/status): each is
                  a sleep that ended, so with nothing to do and no watchdog the goal is 0
  allocations     heap allocations per second (the streaming goal: none per frame)
and, once: start-up to READY=1 (exec → the datagram), peak RSS (VmHWM) after the streaming window
next to 20 MB + the ring's bytes (ringFrames × the frame's bytes, from the board), and what it
is made of (RssAnon: the process's own pages; RssFile: its mapped libraries), the binary's
size and its size stripped. --threads prints each thread's share of the wake-ups (the thread's
name is what the daemon or Dispatch gave it).
Rows go to standard output (and --tsv FILE) in Tests/bench.sh's format:
  SECTION  NAME  VALUE  UNIT  PEER  PEER_VALUE  RATIO
"""
import argparse, json, os, shutil, socket, subprocess, sys, tempfile, time

root = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
parser = argparse.ArgumentParser(add_help=False)
parser.add_argument("--shutter", default=os.path.join(root, ".build/release/shutter"))
parser.add_argument("--seconds", type=float, default=10)
parser.add_argument("--tsv")
parser.add_argument("--threads", action="store_true")
parser.add_argument("-h", "--help", action="store_true")
args = parser.parse_args()
if args.help:
    print(__doc__.split("\n", 1)[1].strip()); sys.exit(0)
binary = os.path.realpath(args.shutter)
if not os.access(binary, os.X_OK):
    sys.exit(f"bench-idle: no {binary} (swift build -c release)")
hz = os.sysconf("SC_CLK_TCK")
work = tempfile.mkdtemp(prefix="shutter-idle.")
rows = []


def row(name, value, unit, peer="-", peer_value=None):
    ratio = "-" if peer_value in (None, 0) else f"{value / peer_value:.3f}"
    rows.append(f"idle\t{name}\t{value:.6g}\t{unit}\t{peer}\t{'-' if peer_value is None else f'{peer_value:.6g}'}\t{ratio}")
    print(rows[-1], flush=True)


def board(name, **camera):
    b = json.load(open(os.path.join(root, "Boards/simulator.json")))
    b["camera"].update(camera)
    b["output"]["directory"] = os.path.join(work, "photos")
    path = os.path.join(work, f"{name}.json")
    json.dump(b, open(path, "w"))
    return path, b


def threads(pid):
    """{tid: (name, cpu ticks, voluntary switches, involuntary switches)} of a live process."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            stat = open(f"/proc/{pid}/task/{tid}/stat").read()
            status = open(f"/proc/{pid}/task/{tid}/status").read()
        except OSError:
            continue  # it ended between the listing and the read
        fields = stat[stat.rindex(")") + 2:].split()
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        values = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
        out[int(tid)] = (name, int(fields[11]) + int(fields[12]),
                         int(values["voluntary_ctxt_switches"]), int(values["nonvoluntary_ctxt_switches"]))
    return out


counter = None
if shutil.which("cc"):
    counter = os.path.join(work, "malloc-count.so")
    if subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", counter, os.path.join(root, "Deploy/vm/malloc-count.c")]).returncode:
        counter = None


def allocations(pid):
    try:
        with open(os.path.join(work, f"live.{pid}"), "rb") as f:
            return int.from_bytes(f.read(8), "little")
    except OSError:
        return None


def run(mode, board_path, shot=False):
    """Starts the daemon, times READY=1, measures an idle window; returns its figures. With
    `shot`, a photo is taken first (`shutter ctl --wait capture`), as a rig waits between shots."""
    notify_path = os.path.join(work, f"{mode}.notify")
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(notify_path)
    env = dict(os.environ, NOTIFY_SOCKET=notify_path)
    env.pop("WATCHDOG_USEC", None); env.pop("WATCHDOG_PID", None)
    if counter:
        env.update(LD_PRELOAD=counter, MALLOC_COUNT_LIVE=os.path.join(work, "live"))
    err = open(os.path.join(work, f"{mode}.err"), "w")
    start = time.monotonic()
    # Standard input held open: the simulator reads it as a trace that has not ended.
    daemon = subprocess.Popen([binary, "run", "--board", board_path, "--no-state", "--socket", os.path.join(work, f"{mode}.sock")],
                              stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=err, env=env)
    notify.settimeout(15)
    ready = None
    try:
        while ready is None:
            if b"READY=1" in notify.recv(4096):
                ready = (time.monotonic() - start) * 1000
    except socket.timeout:
        daemon.kill(); sys.exit(f"bench-idle: {mode}: no READY=1 within 15 s: {open(err.name).read()[-500:]}")
    if shot:
        taken = subprocess.run([binary, "ctl", "--socket", os.path.join(work, f"{mode}.sock"), "--wait", "capture"],
                               capture_output=True, text=True, timeout=30)
        if taken.returncode:
            daemon.kill(); sys.exit(f"bench-idle: {mode}: the shot failed: {taken.stderr.strip()}")
    time.sleep(args.seconds / 5)
    notify.setblocking(False)
    try:  # what was said before the window (STATUS= lines of the start and the shot)
        while notify.recv(4096):
            pass
    except BlockingIOError:
        pass
    before, allocs_before = threads(daemon.pid), allocations(daemon.pid)
    time.sleep(args.seconds)
    after, allocs_after = threads(daemon.pid), allocations(daemon.pid)
    pings = 0
    try:
        while notify.recv(4096):
            pings += 1
    except BlockingIOError:
        pass
    status = dict(line.split(":", 1) for line in open(f"/proc/{daemon.pid}/status") if ":" in line)
    hwm, anon, file = (int(status[key].split()[0]) for key in ("VmHWM", "RssAnon", "RssFile"))
    daemon.terminate(); daemon.wait(10); notify.close()
    per_thread = {}
    for tid, (name, ticks, vol, invol) in after.items():
        b = before.get(tid, (name, 0, 0, 0))
        per_thread[tid] = (name, ticks - b[1], vol - b[2], invol - b[3], tid not in before)
    ended = [before[tid][0] for tid in before if tid not in after]
    return {"ready": ready, "threads": per_thread, "ended": ended, "hwm": hwm, "anon": anon, "file": file, "notify": pings,
            "cpu": sum(t[1] for t in per_thread.values()) / hz,
            "switches": sum(t[2] for t in per_thread.values()),
            "allocs": None if allocs_before is None or allocs_after is None else allocs_after - allocs_before}


def report(mode, figures):
    s = args.seconds
    row(f"CPU time over {s:g} idle s, {mode}", figures["cpu"], "s")
    row(f"voluntary context switches over {s:g} idle s, {mode}", figures["switches"], "switches",
        *(("watchdog pings (none: no WATCHDOG_USEC)", 0) if mode.startswith("camera stopped") else ("-", None)))
    if figures["allocs"] is not None:
        row(f"heap allocations per second, {mode}", figures["allocs"] / s, "/s")
    row(f"start-up to READY=1, {mode}", figures["ready"], "ms")
    busy = sorted(figures["threads"].items(), key=lambda kv: -kv[1][2])
    print(f"# {mode}: {len(figures['threads'])} threads; wake-ups by thread: "
          + ", ".join(f"{name}[{tid}] {vol}{' (new)' if new else ''}" for tid, (name, ticks, vol, invol, new) in busy if vol)
          + (f"; ended in the window: {', '.join(figures['ended'])}" if figures["ended"] else "")
          + f"; notify datagrams in the window: {figures['notify']}", file=sys.stderr if not args.threads else sys.stdout)


streaming_board, streaming = board("streaming")
figures = run("camera streaming", streaming_board)
report("camera streaming", figures)
camera = streaming["camera"]
frame_bytes = camera["width"] * camera["height"] * 2  # the synthetic camera streams YUYV
ring_bytes = camera.get("ringFrames", 4) * frame_bytes
row("peak RSS (VmHWM), camera streaming", figures["hwm"] / 1024, "MiB",
    f"20 MB + ring {camera.get('ringFrames', 4)} × {camera['width']}x{camera['height']} YUYV", (20e6 + ring_bytes) / 1048576)
# What the peak is made of, at the window's end: the process's own pages (heap, the ring's
# buffers, stacks) and the pages of the files it maps (its libraries: the Swift runtime and
# Foundation, libcamera, gnutls, ...; shared with any other process mapping them).
row("RSS anonymous (own pages), camera streaming", figures["anon"] / 1024, "MiB",
    f"20 MB + ring {camera.get('ringFrames', 4)} × {camera['width']}x{camera['height']} YUYV", (20e6 + ring_bytes) / 1048576)
row("RSS file-backed (mapped libraries), camera streaming", figures["file"] / 1024, "MiB")
stopped_board = board("stopped", keepStreaming=False)[0]
report("camera stopped", run("camera stopped", stopped_board))
report("camera stopped after a shot", run("camera stopped after a shot", stopped_board, shot=True))
nocamera_board = board("nocamera", device="/dev/video-absent", pixelFormat="YUYV")[0]
report("no camera", run("no camera", nocamera_board))
size = os.stat(binary).st_size
stripped = os.path.join(work, "shutter.stripped")
if subprocess.run(["strip", "-o", stripped, binary]).returncode == 0:
    row("binary size", size / 1048576, "MiB")
    row("binary size, stripped", os.stat(stripped).st_size / 1048576, "MiB")
if args.tsv:
    with open(args.tsv, "a") as f:
        f.write("".join(r + "\n" for r in rows))
shutil.rmtree(work, ignore_errors=True)
