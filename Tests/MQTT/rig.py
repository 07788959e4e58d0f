#!/usr/bin/env python3
"""rig.py - the MQTT tests' rig: a real mosquitto broker, MQTT clients and shutter daemons.

Python 3 standard library only. MQTT is read and written with Debian's mosquitto_sub and
mosquitto_pub (package mosquitto-clients) as subprocesses; the broker is Debian's mosquitto.

  python3 Tests/MQTT/rig.py selftest        the broker plumbing alone, no shutter needed: a broker on
                                            a free loopback port (generated config, password file),
                                            a pub/sub round trip, MQTT v5 properties, a wrong password
                                            refused, kill and restart on the same port, stop
  python3 Tests/MQTT/rig.py broker          start a broker, print its port, user and password
                                            file, and keep it running until Ctrl-C
  python3 Tests/MQTT/rig.py --help

As a module (Tests/MQTT/test-rig.py, bench-scale.py, netns.py):
  Broker(workdir, host="127.0.0.1", wrap=[])  start() / kill() / restart() / stop(); `wrap` runs
                                            it under a prefix (["ip", "netns", "exec", "brk"])
  Sub(broker, topics)                       mosquitto_sub in the background, every message kept
                                            (time, retained, qos, topic, payload, v5 properties)
  publish(broker, topic, payload, ...)      one mosquitto_pub; publish_lines(...) many in one process
  Node(...)                                 one `shutter run` on a generated simulator board
  Checks()                                  one line per check, "ok - ..." / "FAIL - ...", and
                                            the summary "mqtt: N passed, M failed"

Every address used is 127.0.0.1, or one given by a caller inside network namespaces it made.
"""
import json
import os
import pwd
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
LOOPBACK = "127.0.0.1"


# ---------------------------------------------------------------- checks and output

class Checks:
    """One line per check: "ok - what" or "FAIL - what" (with indented detail lines), and
    "skip - why" for one that cannot run here (Tests/run.sh counts those)."""

    def __init__(self, name="mqtt"):
        self.name = name
        self.passed = 0
        self.failed = 0
        self.skipped = 0
        self.failures = []

    def check(self, what, condition, detail=None):
        if condition:
            self.passed += 1
            print(f"ok - {what}", flush=True)
        else:
            self.failed += 1
            self.failures.append(what)
            print(f"FAIL - {what}", flush=True)
            if detail:
                for line in str(detail).splitlines()[:15]:
                    print(f"#   {line}", flush=True)
        return bool(condition)

    def skip(self, why):
        self.skipped += 1
        print(f"skip - {why}", flush=True)

    def note(self, text):
        for line in str(text).splitlines():
            print(f"# {line}", flush=True)

    def finish(self):
        print(f"{self.name}: {self.passed} passed, {self.failed} failed", flush=True)
        if self.skipped:
            print(f"# {self.skipped} skipped", flush=True)
        return 0 if self.failed == 0 else 1


def wait_until(predicate, timeout, interval=0.05):
    """Calls predicate until it returns something true (returned) or timeout seconds pass (None)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            return None
        time.sleep(interval)


def free_port(host=LOOPBACK):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def realtime_ns():
    return time.clock_gettime_ns(time.CLOCK_REALTIME)


# ---------------------------------------------------------------- the broker

class Broker:
    """Debian's mosquitto on HOST:PORT with a generated configuration in a directory of its
    own: `allow_anonymous false`, a password file made with `mosquitto_passwd -b -c`,
    persistence off. Users: {name: password}; the first is the one clients use by default."""

    def __init__(self, workdir, host=LOOPBACK, port=None, users=None, wrap=None, extra_config=""):
        self.dir = os.path.join(workdir, "broker")
        os.makedirs(self.dir, exist_ok=True)
        self.host = host
        self.port = port or (free_port(host) if host == LOOPBACK else 1883)
        self.users = users or {"shutter": "pw-" + uuid.uuid4().hex[:12]}
        self.user, self.password = next(iter(self.users.items()))
        self.wrap = list(wrap or [])
        self.process = None
        self.starts = 0
        self.log_path = os.path.join(self.dir, "mosquitto.log")
        self.password_file = os.path.join(self.dir, "passwords")
        first = True
        for name, password in self.users.items():
            subprocess.run(["mosquitto_passwd", "-b"] + (["-c"] if first else []) + [self.password_file, name, password],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            first = False
        os.chmod(self.password_file, 0o600)
        self.config_path = os.path.join(self.dir, "mosquitto.conf")
        # Run as root, mosquitto would drop to the user "mosquitto", which cannot read this
        # directory (0700 under a 0700 temp dir): it stays the user that runs the test.
        me = pwd.getpwuid(os.getuid()).pw_name
        with open(self.config_path, "w") as f:
            f.write(f"listener {self.port} {self.host}\n"
                    "allow_anonymous false\n"
                    f"password_file {self.password_file}\n"
                    "persistence false\n"
                    f"user {me}\n"
                    "log_dest stderr\n"
                    "log_type error\nlog_type warning\nlog_type notice\nlog_type information\n"
                    "connection_messages true\n"
                    "log_timestamp_format %H:%M:%S\n"
                    + extra_config)

    @property
    def address(self):
        return f"{self.host}:{self.port}"

    def start(self, timeout=10):
        assert self.process is None or self.process.poll() is not None, "broker already running"
        log = open(self.log_path, "a")
        log.write(f"--- start {self.starts + 1}\n")
        log.flush()
        self.process = subprocess.Popen(self.wrap + ["mosquitto", "-c", self.config_path],
                                        stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                        start_new_session=True)
        log.close()
        self.starts += 1
        # Ready when a client can connect and be answered (a CONNECT with our password).
        ok = wait_until(lambda: self.process.poll() is None and self.ping(), timeout, 0.1)
        if not ok:
            raise RuntimeError(f"mosquitto did not start on {self.address}: {self.log_tail()}")
        return self

    def ping(self):
        """True when an authenticated client can publish (mosquitto_pub exits 0)."""
        r = subprocess.run(self.wrap + ["mosquitto_pub"] + self.client_args() + ["-t", "rig-test/ping", "-n"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10)
        return r.returncode == 0

    @property
    def pid(self):
        return self.process.pid if self.process and self.process.poll() is None else None

    def kill(self):
        """SIGKILL: the broker vanishes as a crashed one would (no clean disconnects)."""
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def restart(self, timeout=10):
        """Killed and started again on the same port."""
        self.kill()
        # The port is free at once (SO_REUSEADDR); wait until nothing listens to be sure.
        wait_until(lambda: not self.listening(), 5)
        return self.start(timeout)

    def listening(self):
        if self.wrap:
            return self.ping()
        try:
            with socket.create_connection((self.host, self.port), timeout=0.5):
                return True
        except OSError:
            return False

    def client_args(self, user=None, password=None, version="mqttv5"):
        user = user or self.user
        password = self.users.get(user, "") if password is None else password
        args = ["-h", self.host, "-p", str(self.port), "-u", user, "-P", password]
        if version:
            args += ["-V", version]
        return args

    def log_tail(self, lines=20):
        try:
            with open(self.log_path, errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""

    def cpu_ticks(self):
        return process_cpu_ticks(self.pid) if self.pid else None


def process_cpu_ticks(pid):
    """utime + stime of a process from /proc/PID/stat, in clock ticks."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return None


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


# ---------------------------------------------------------------- MQTT clients

class Message:
    __slots__ = ("time", "retained", "qos", "topic", "payload", "expiry", "response_topic", "correlation")

    def __init__(self, time_, retained, qos, topic, payload, expiry, response_topic, correlation):
        self.time, self.retained, self.qos, self.topic = time_, retained, qos, topic
        self.payload, self.expiry, self.response_topic, self.correlation = payload, expiry, response_topic, correlation

    @property
    def text(self):
        return self.payload.decode("utf-8", "replace")

    def json(self):
        try:
            return json.loads(self.payload)
        except ValueError:
            return None

    def __repr__(self):
        return f"{self.topic} {'(retained) ' if self.retained else ''}{self.text[:200]}"


class Sub:
    """mosquitto_sub on TOPICS in the background; every message is kept in `messages`.
    Ready (subscribed) when the constructor returns: a marker published on a topic of its own
    has come back. Times are the client's receive times (CLOCK_REALTIME, s)."""

    FORMAT = "%U %r %q %x %E %R %D %t"  # hex payload: any byte is safe; topic last

    def __init__(self, broker, topics, user=None, password=None, extra=None, wrap=None, ready_timeout=10):
        self.broker = broker
        self.messages = []
        self.lock = threading.Lock()
        self.marker = f"rig-test/sync/{uuid.uuid4().hex}"
        topics = [topics] if isinstance(topics, str) else list(topics)
        args = []
        for t in topics + [self.marker]:
            args += ["-t", t]
        self.process = subprocess.Popen(
            list(wrap if wrap is not None else broker.wrap) + ["stdbuf", "-oL", "mosquitto_sub"] + broker.client_args(user, password)
            + ["-q", "1", "-F", self.FORMAT, "--nodelay"] + (extra or []) + args,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        self.stderr = b""
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.err_reader = threading.Thread(target=self._read_err, daemon=True)
        self.err_reader.start()
        self.wrap = wrap
        if not self.sync(ready_timeout):
            raise RuntimeError(f"mosquitto_sub on {topics} never became ready: {self.stderr.decode(errors='replace')}")

    def sync(self, timeout=10):
        """True once a marker published now comes back: subscribed (again, after a broker restart)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.process.poll() is None:
            token = uuid.uuid4().hex
            publish(self.broker, self.marker, token, qos=0, wrap=self.wrap)
            if wait_until(lambda: any(m.topic == self.marker and m.text == token for m in self.messages), 0.5):
                return True
        return False

    def _read(self):
        for raw in self.process.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            parts = line.split(" ", 7)
            if len(parts) < 8:
                continue
            try:
                m = Message(float(parts[0]), parts[1] == "1", int(parts[2]), parts[7], bytes.fromhex(parts[3]),
                            parts[4] or None, parts[5] or None, parts[6] or None)
            except ValueError:
                continue
            with self.lock:
                self.messages.append(m)

    def _read_err(self):
        for raw in self.process.stderr:
            self.stderr += raw

    def snapshot(self, topic=None, prefix=None, since=None):
        with self.lock:
            ms = list(self.messages)
        return [m for m in ms if m.topic != self.marker
                and (topic is None or m.topic == topic)
                and (prefix is None or m.topic.startswith(prefix))
                and (since is None or m.time >= since)]

    def wait(self, predicate, timeout):
        """Until predicate(messages) is true; returns its value (None on timeout)."""
        return wait_until(lambda: predicate(self.snapshot()), timeout)

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(3)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def publish(broker, topic, payload, qos=1, retain=False, user=None, password=None, properties=None, wrap=None,
            version="mqttv5", timeout=15):
    """One mosquitto_pub. payload: str or bytes (None: an empty message). properties:
    [("publish", "response-topic", "a/b"), ...] for -D. Returns (exit status, stderr)."""
    args = list(wrap if wrap is not None else broker.wrap) + ["mosquitto_pub"] + broker.client_args(user, password, version)
    args += ["-t", topic, "-q", str(qos)]
    if retain:
        args.append("-r")
    for p in properties or []:
        args += ["-D"] + list(p)
    data = None
    if payload is None:
        args.append("-n")
    else:
        data = payload.encode() if isinstance(payload, str) else payload
        args.append("-s")
    r = subprocess.run(args, input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    return r.returncode, r.stderr.decode(errors="replace")


def publish_lines(broker, topic, lines, qos=1, wrap=None, timeout=120):
    """Many messages on one connection: mosquitto_pub -l, one message a line (lines: bytes
    without newlines; mosquitto_pub sends an empty line as nothing)."""
    args = list(wrap if wrap is not None else broker.wrap) + ["mosquitto_pub"] + broker.client_args()
    args += ["-t", topic, "-q", str(qos), "-l"]
    data = b"".join(l + b"\n" for l in lines)
    r = subprocess.run(args, input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    return r.returncode, r.stderr.decode(errors="replace")


# ---------------------------------------------------------------- shutter daemons

def shutter_binary():
    path = os.environ.get("SHUTTER", os.path.join(ROOT, ".build", "debug", "shutter"))
    return os.path.abspath(path)


def board_for(workdir, name, broker, rig="testrig", prefix="shutter", node=None, mqtt=None, camera=None,
              output_dir=None, password_file=None):
    """A board file for one node: Boards/simulator.json with an `mqtt` section (the contract's
    fields), the output directory in workdir and a small synthetic camera."""
    with open(os.path.join(ROOT, "Boards", "simulator.json")) as f:
        board = json.load(f)
    if password_file is None:
        password_file = os.path.join(workdir, f"{name}.password")
        with open(password_file, "w") as f:
            f.write(broker.password + "\n")
        os.chmod(password_file, 0o600)
    section = {"host": broker.host, "port": broker.port, "username": broker.user, "passwordFile": password_file,
               "rig": rig, "topicPrefix": prefix, "keepAliveS": 5}
    if node:
        section["node"] = node
    section.update(mqtt or {})
    board["mqtt"] = section
    cam = dict(board.get("camera", {}))
    cam.update({"width": 320, "height": 240})
    cam.update(camera or {})
    board["camera"] = cam
    out = dict(board.get("output", {}))
    out["directory"] = output_dir or os.path.join(workdir, "photos", name)
    out.pop("template", None)
    board["output"] = out
    path = os.path.join(workdir, f"board-{name}.json")
    with open(path, "w") as f:
        json.dump(board, f, indent=1)
    return path


class Node:
    """`shutter run --board BOARD --socket SOCK --no-state [--mqtt-node NAME]` with standard
    input a pipe (simulated edges), standard output (event lines) kept in `events`, standard
    error in a file. The board names the output directory."""

    def __init__(self, name, board, workdir, mqtt_node=True, extra_args=None, wrap=None, env=None):
        self.name = name
        self.board = board
        self.workdir = workdir
        self.socket_path = os.path.join(workdir, f"{name}.sock")
        self.stdout_path = os.path.join(workdir, f"{name}.events.jsonl")
        self.stderr_path = os.path.join(workdir, f"{name}.stderr")
        with open(board) as f:
            self.output_dir = json.load(f)["output"]["directory"]
        self.args = [shutter_binary(), "run", "--board", board, "--socket", self.socket_path, "--no-state"]
        if mqtt_node:
            self.args += ["--mqtt-node", name]
        self.args += list(extra_args or [])
        self.wrap = list(wrap or [])
        self.env = env
        self.process = None
        self.events = []
        self.lock = threading.Lock()
        self.started_mono = None
        self.starts = 0

    def start(self, wait_socket=True, timeout=30):
        if os.path.exists(self.socket_path):
            os.unlink(self.socket_path)
        self.stdout_file = open(self.stdout_path, "ab")
        self.stderr_file = open(self.stderr_path, "ab")
        env = dict(os.environ)
        env.update(self.env or {})
        self.process = subprocess.Popen(self.wrap + self.args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=self.stderr_file, cwd=self.workdir, env=env, start_new_session=True)
        self.started_mono = time.monotonic()
        self.starts += 1
        self.reader = threading.Thread(target=self._read, args=(self.process,), daemon=True)
        self.reader.start()
        if wait_socket and not wait_until(lambda: os.path.exists(self.socket_path) or not self.alive(), timeout):
            raise RuntimeError(f"{self.name}: no socket after {timeout} s: {self.stderr_tail()}")
        if wait_socket and not self.alive():
            raise RuntimeError(f"{self.name}: exited {self.process.returncode}: {self.stderr_tail()}")
        return self

    def _read(self, process):
        for raw in process.stdout:
            self.stdout_file.write(raw)
            self.stdout_file.flush()
            try:
                event = json.loads(raw)
            except ValueError:
                continue
            event["_rx"] = time.time()
            with self.lock:
                self.events.append(event)

    def alive(self):
        return self.process is not None and self.process.poll() is None

    @property
    def pid(self):
        return self.process.pid if self.alive() else None

    def stop(self, sig=signal.SIGTERM, timeout=10):
        if not self.alive():
            return self.process.returncode if self.process else None
        try:
            self.process.stdin.close()
        except OSError:
            pass
        self.process.send_signal(sig)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        return self.process.returncode

    def kill(self):
        if self.alive():
            self.process.kill()
            self.process.wait()

    def pause(self):
        os.kill(self.process.pid, signal.SIGSTOP)

    def resume(self):
        os.kill(self.process.pid, signal.SIGCONT)

    # ---- input

    def edges(self, edges):
        """Simulated edges [(line, active, seconds from now)], sent as the trace lines
        {"t": …, "line": …, "active": …} timed after the daemon's start (a little late: the
        daemon's own start instant is after ours)."""
        base = time.monotonic() - self.started_mono + 0.02
        data = "".join(json.dumps({"t": round(base + dt, 4), "line": line, "active": active}) + "\n"
                       for line, active, dt in edges)
        self.process.stdin.write(data.encode())
        self.process.stdin.flush()

    def full_press(self, hold=0.12):
        """A full press as a finger makes it: half, then full, held, released."""
        self.edges([("half", True, 0.0), ("full", True, 0.03), ("full", False, 0.03 + hold),
                    ("half", False, 0.05 + hold)])

    # ---- the socket API

    def request(self, request, timeout=10):
        """One request line on the socket; returns the reply (parsed)."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(self.socket_path)
            s.sendall((json.dumps(request) + "\n").encode())
            data = b""
            while b"\n" not in data:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        return json.loads(data.split(b"\n", 1)[0])

    # ---- what it said

    def snapshot(self, kind=None):
        with self.lock:
            es = list(self.events)
        return [e for e in es if kind is None or e.get("event") == kind]

    def wait_event(self, predicate, timeout):
        return wait_until(lambda: next((e for e in self.snapshot() if predicate(e)), None), timeout)

    def stderr_text(self):
        try:
            with open(self.stderr_path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def stderr_tail(self, lines=12):
        return "".join(self.stderr_text().splitlines(keepends=True)[-lines:])

    def photos_on_disk(self):
        """Every .jpg under the output directory, as paths relative to it."""
        found = []
        for dirpath, _, files in os.walk(self.output_dir):
            for name in files:  # latest.jpg is a link to the newest photo, not one more
                if name.endswith(".jpg") and not os.path.islink(os.path.join(dirpath, name)):
                    found.append(os.path.relpath(os.path.join(dirpath, name), self.output_dir))
        return sorted(found)

    def cpu_ticks(self):
        return process_cpu_ticks(self.pid) if self.pid else None


def shutter_supports_mqtt(binary=None):
    """(True, "") when `shutter run --help` offers --mqtt-node, else (False, why)."""
    binary = binary or shutter_binary()
    if not os.access(binary, os.X_OK):
        return False, f"{binary} is not built (swift build --product shutter)"
    r = subprocess.run([binary, "run", "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30)
    if b"--mqtt-node" not in r.stdout:
        return False, f"{binary} has no MQTT client yet (`shutter run --help` has no --mqtt-node)"
    return True, ""


def tools_missing():
    return [t for t in ("mosquitto", "mosquitto_pub", "mosquitto_sub", "mosquitto_passwd")
            if not shutil.which(t) and not os.path.exists(f"/usr/sbin/{t}")]


# ---------------------------------------------------------------- self test and CLI

def selftest():
    checks = Checks("mqtt")
    missing = tools_missing()
    if missing:
        print(f"mqtt: not installed: {' '.join(missing)} (sudo apt-get install -y mosquitto mosquitto-clients)",
              file=sys.stderr)
        return 1
    work = tempfile.mkdtemp(prefix="shutter-mqtt-")
    broker = Broker(work, users={"shutter": "right-" + uuid.uuid4().hex[:8], "other": "x"})
    try:
        broker.start()
        checks.check(f"broker: mosquitto listens on {broker.address} (config {broker.config_path})", broker.listening())
        with open(broker.config_path) as f:
            conf = f.read()
        checks.check("broker: the config refuses anonymous clients, uses the password file, persistence off",
                     "allow_anonymous false" in conf and "password_file" in conf and "persistence false" in conf, conf)
        sub = Sub(broker, ["t/#"])
        t0 = time.time()
        publish(broker, "t/a", '{"x":1}', qos=1)
        m = sub.wait(lambda ms: next((x for x in ms if x.topic == "t/a"), None), 5)
        checks.check(f"pub/sub: a QoS 1 message comes back ({(m.time - t0) * 1000:.1f} ms)" if m else "pub/sub: a QoS 1 message comes back",
                     m and m.json() == {"x": 1}, sub.snapshot())
        publish(broker, "t/v5", "ping", properties=[("publish", "response-topic", "t/resp"),
                                                    ("publish", "correlation-data", "corr-1")])
        m = sub.wait(lambda ms: next((x for x in ms if x.topic == "t/v5"), None), 5)
        checks.check("MQTT v5: response topic and correlation data arrive with the message",
                     m and m.response_topic == "t/resp" and m.correlation == "corr-1", m)
        binary = bytes(range(256))
        publish(broker, "t/bin", binary)
        m = sub.wait(lambda ms: next((x for x in ms if x.topic == "t/bin"), None), 5)
        checks.check("a binary payload (every byte value) is read back unchanged", m and m.payload == binary)
        rc, err = publish(broker, "t/a", "nope", password="wrong")
        checks.check(f"a wrong password is refused (mosquitto_pub exit {rc}: {err.strip().splitlines()[0] if err.strip() else ''})", rc != 0 and ("refused" in err.lower() or "not authori" in err.lower()))
        rc, err = publish(broker, "t/a", "nope", user="nobody", password="")
        checks.check("an unknown user is refused", rc != 0)
        publish(broker, "t/retained", "kept", retain=True)
        n = publish_lines(broker, "t/lines", [f"line {i}".encode() for i in range(1000)])
        got = sub.wait(lambda ms: len([x for x in ms if x.topic == "t/lines"]) >= 1000 or None, 10)
        checks.check(f"1000 messages from one mosquitto_pub -l arrive ({len(sub.snapshot('t/lines'))})", got, n)
        port, pid = broker.port, broker.pid
        broker.restart()
        checks.check(f"broker: killed (pid {pid}) and restarted on the same port {port} (pid {broker.pid})",
                     broker.port == port and broker.pid and broker.pid != pid and broker.listening())
        late = Sub(broker, ["t/retained"])
        time.sleep(0.3)
        checks.check("persistence off: a retained message does not survive the restart",
                     not late.snapshot("t/retained"), late.snapshot())
        late.stop()
        # mosquitto_sub reconnects by itself (and subscribes again): a message after that reaches it.
        resubscribed = sub.sync(15)
        publish(broker, "t/after", "again")
        m = sub.wait(lambda ms: next((x for x in ms if x.topic == "t/after"), None), 10)
        checks.check("a client reconnects to the restarted broker and subscribes again",
                     resubscribed and m is not None, sub.stderr.decode(errors="replace"))
        sub.stop()
        broker.stop()
        checks.check("broker: stopped, nothing listens on the port", not broker.listening())
    except Exception as e:  # a broken rig is a failed check, with what happened
        checks.check(f"rig self test ran to its end ({type(e).__name__}: {e})", False, broker.log_tail())
    finally:
        broker.kill()
        shutil.rmtree(work, ignore_errors=True)
    return checks.finish()


def serve():
    work = tempfile.mkdtemp(prefix="shutter-mqtt-")
    broker = Broker(work).start()
    print(f"broker {broker.address} user {broker.user} password {broker.password} (file {broker.password_file})")
    print(f"  mosquitto_sub {' '.join(broker.client_args())} -t 'shutter/#' -v")
    print("Ctrl-C stops it.", flush=True)
    try:
        broker.process.wait()
    except KeyboardInterrupt:
        pass
    finally:
        broker.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    if argv[0] == "selftest":
        return selftest()
    if argv[0] == "broker":
        return serve()
    print(f"rig.py: unknown command '{argv[0]}' (try --help)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
