#!/usr/bin/python3
"""The dashboard under a flood: what issue 32's done-means asks of it.

Starts a real mthub (--http-port, a token, waiting for workers that never
come, so only the dashboard works) and, at once:
  - 4 clients each send `GET / HTTP/1.1` and then one 512 MiB line with no
    line end (over TLS, as the dashboard speaks by default; --plain runs
    the hub with --http-plain and sends them in clear);
  - 500 idle connections (half of them only TCP, half after the TLS
    handshake) and 64 slowloris ones trickling a header byte every 0.5 s;
then, while all of that is open, times authorised GETs of /api/status
(a new connection each: TCP, TLS handshake, request, answer).

Prints the hub's RSS before, its peak during the flood (sampled from
/proc every 10 ms), how many bytes of each long line the hub took before
it closed the connection, and the GETs' times. Passes (exit 0) when the
peak stays under +64 MB and every GET is answered within 1 s.

  tests/bench/http_flood.py [--build build] [--plain] [--line-mib 512] [--idle 500]
                            [--gets 20] [--json out.json]
"""
import argparse
import json
import os
import resource
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOKEN = "http-flood-token"


def rss_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def client_context():
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE  # the hub's own certificate; pinning is not measured here
    return ctx


def connect(port, tls, timeout=10):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    return client_context().wrap_socket(s) if tls else s


def long_line(port, tls, mib, result, index):
    """GET / and then `mib` MiB without a line end; records the bytes sent before the close."""
    sent = 0
    chunk = b"A" * (1 << 20)
    try:
        s = connect(port, tls)
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Long: ")
        for _ in range(mib):
            s.sendall(chunk)
            sent += len(chunk)
        result[index] = {"sent_bytes": sent, "closed_by_hub": False}
    except OSError:
        result[index] = {"sent_bytes": sent, "closed_by_hub": True}


def timed_get(port, tls):
    start = time.monotonic()
    try:
        s = connect(port, tls, timeout=5)
        s.sendall(f"GET /api/status HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
                  "Connection: close\r\n\r\n".encode())
        data = b""
        while True:
            b = s.recv(65536)
            if not b:
                break
            data += b
        s.close()
        ok = data.startswith(b"HTTP/1.1 200") and b'"state"' in data
    except OSError:
        ok = False
    return ok, time.monotonic() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--plain", action="store_true", help="the hub with --http-plain")
    ap.add_argument("--line-mib", type=int, default=512)
    ap.add_argument("--lines", type=int, default=4)
    ap.add_argument("--idle", type=int, default=500)
    ap.add_argument("--slowloris", type=int, default=64)
    ap.add_argument("--gets", type=int, default=20)
    ap.add_argument("--json")
    args = ap.parse_args()
    tls = not args.plain
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))

    work = tempfile.mkdtemp(prefix="http-flood-")
    with open(os.path.join(work, "token"), "w") as f:
        f.write(TOKEN + "\n")
    port = free_port()
    cmd = [os.path.join(args.build, "hub/mthub"), "--port", "0", "--workers", "1",
           "--http-port", str(port), "--token-file", os.path.join(work, "token"),
           "--dataset", "/usr/share/datasets/fashion-mnist", "--steps", "1"]
    if args.plain:
        cmd.append("--http-plain")
    env = dict(os.environ, MT_STATE_DIR=os.path.join(work, "state"))
    log = open(os.path.join(work, "hub.log"), "w")
    hub = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        for _ in range(300):
            ok, _ = timed_get(port, tls)
            if ok:
                break
            time.sleep(0.1)
        else:
            sys.exit(f"the hub's dashboard did not come up; see {work}/hub.log")
        time.sleep(0.5)
        before = rss_bytes(hub.pid)
        peak = [before]
        sampling = [True]

        def sample():
            while sampling[0]:
                peak[0] = max(peak[0], rss_bytes(hub.pid))
                time.sleep(0.01)

        sampler = threading.Thread(target=sample)
        sampler.start()

        idle = []
        for i in range(args.idle):
            try:
                idle.append(connect(port, tls and i % 2 == 1))
            except OSError:
                pass  # closed to make room, or refused: either way not a lock-out
        lines = [None] * args.lines
        senders = [threading.Thread(target=long_line, args=(port, tls, args.line_mib, lines, i))
                   for i in range(args.lines)]
        for t in senders:
            t.start()
        slow = []
        for _ in range(args.slowloris):
            try:
                s = connect(port, tls)
                s.sendall(b"GET / HTTP/1.1\r\n")
                slow.append(s)
            except OSError:
                pass
        stop_trickle = [False]

        def trickle():
            while not stop_trickle[0]:
                for s in slow:
                    try:
                        s.sendall(b"X")
                    except OSError:
                        pass
                time.sleep(0.5)

        trickler = threading.Thread(target=trickle)
        trickler.start()

        times, failures = [], 0
        for _ in range(args.gets):
            ok, seconds = timed_get(port, tls)
            times.append(seconds)
            failures += not ok
            time.sleep(0.05)
        for t in senders:
            t.join()
        stop_trickle[0] = True
        trickler.join()
        sampling[0] = False
        sampler.join()
        alive = hub.poll() is None
        for s in idle + slow:
            s.close()
    finally:
        hub.terminate()
        hub.wait(30)
    growth = peak[0] - before
    result = {
        "tls": tls, "rss_before_mb": before / 1e6, "rss_peak_mb": peak[0] / 1e6,
        "rss_growth_mb": growth / 1e6, "long_lines": lines, "idle_connections": args.idle,
        "slowloris": args.slowloris, "gets": len(times), "get_failures": failures,
        "get_max_s": max(times), "get_median_s": statistics.median(times), "hub_alive": alive,
    }
    print(f"dashboard over {'TLS' if tls else 'plain HTTP'}: {args.lines} x {args.line_mib} MiB lines, "
          f"{args.idle} idle and {args.slowloris} slowloris connections")
    print(f"  hub RSS {before / 1e6:.1f} MB before, peak {peak[0] / 1e6:.1f} MB (+{growth / 1e6:.1f} MB)")
    for i, line in enumerate(lines):
        print(f"  long line {i}: {line['sent_bytes'] / 1e6:.2f} MB sent before "
              f"{'the hub closed it' if line['closed_by_hub'] else 'the end (not closed!)'}")
    print(f"  authorised GET /api/status: {len(times) - failures}/{len(times)} answered, "
          f"median {result['get_median_s'] * 1000:.1f} ms, max {result['get_max_s'] * 1000:.1f} ms")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    passed = alive and growth < 64e6 and failures == 0 and max(times) < 1.0
    print("PASS" if passed else "FAIL", "(under +64 MB, every GET within 1 s)")
    sys.exit(0 if passed else 1)


if __name__ == "__main__":
    main()
