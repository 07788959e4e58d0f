#!/usr/bin/env python3
"""mjpeg-viewers.py - N viewers of a multipart MJPEG stream on 127.0.0.1, timed.

Usage: mjpeg-viewers.py PORT PATH VIEWERS SECONDS PID STAMP_HEADER

Opens VIEWERS connections to http://127.0.0.1:PORT/PATH, reads their parts for SECONDS, and
prints one line of JSON: parts per viewer, each part's latency (arrival on CLOCK_MONOTONIC less
the part's STAMP_HEADER, a time in seconds on the same clock) p50/p99 in ms, and the CPU seconds
process PID spent meanwhile (utime + stime of /proc/PID/stat). Only loopback is ever contacted.
"""
import json
import os
import select
import socket
import sys
import time


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values, p):
    ordered = sorted(values)
    if not ordered:
        return None
    return ordered[min(len(ordered) - 1, max(0, int(-(-len(ordered) * p // 1)) - 1))]


class Viewer:
    def __init__(self, port, path):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.sendall(f"GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".encode())
        self.sock.setblocking(False)
        self.buffer = b""
        self.header_done = False
        self.parts = 0
        self.latencies = []

    def take(self, header, counting):
        try:
            chunk = self.sock.recv(1 << 20)
        except BlockingIOError:
            return
        arrived = time.clock_gettime(time.CLOCK_MONOTONIC)
        self.buffer += chunk
        if not self.header_done:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            self.buffer = self.buffer[end + 4:]
            self.header_done = True
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            fields = {}
            for line in self.buffer[:end].split(b"\r\n"):
                name, _, value = line.partition(b":")
                fields[name.strip().lower()] = value.strip()
            length = int(fields.get(b"content-length", b"-1"))
            if length < 0:
                sys.exit(f"a part without Content-Length: {self.buffer[:end][:200]!r}")
            if len(self.buffer) < end + 4 + length:
                return
            self.buffer = self.buffer[end + 4 + length:]
            stamp = fields.get(header.lower().encode())
            if counting:
                self.parts += 1
                if stamp is not None:
                    self.latencies.append((arrived - float(stamp)) * 1000)


def main():
    port, path, count, seconds, pid, header = sys.argv[1:7]
    port, count, seconds, pid = int(port), int(count), float(seconds), int(pid)
    viewers = [Viewer(port, path) for _ in range(count)]
    # One second to settle (the first previews, the encoder's start), then the measured span.
    for counting, span in ((False, 1.0), (True, seconds)):
        before = cpu_seconds(pid)
        end = time.monotonic() + span
        while time.monotonic() < end:
            if not viewers:
                time.sleep(0.05)
                continue
            ready, _, _ = select.select([v.sock for v in viewers], [], [], 0.05)
            for viewer in viewers:
                if viewer.sock in ready:
                    viewer.take(header, counting)
        cpu = cpu_seconds(pid) - before
    latencies = [value for viewer in viewers for value in viewer.latencies]
    print(json.dumps({
        "viewers": count, "seconds": seconds, "cpuPercent": round(cpu / seconds * 100, 2),
        "fps": [round(v.parts / seconds, 1) for v in viewers],
        "latencyP50": percentile(latencies, 0.5), "latencyP99": percentile(latencies, 0.99),
    }))


main()
