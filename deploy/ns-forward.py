#!/usr/bin/python3
"""Forwards a TCP port of this machine into a network namespace.

  deploy/ns-forward.py NAMESPACE TARGET_HOST TARGET_PORT [LISTEN_PORT]

Listens on 127.0.0.1:LISTEN_PORT here (any free port when it is taken or
not given) and prints the port it got on one line; then moves itself into
NAMESPACE (ip netns exec), keeping that socket, and forwards each
connection to TARGET_HOST:TARGET_PORT as the namespace sees it. Bytes pass
through untouched (TLS included). deploy/netem-cluster.sh uses it so the
hub's dashboard, inside the hub's namespace, opens in a browser here.
Runs until killed. Needs root (ip netns exec).
"""
import os
import socket
import sys
import threading


def pump(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def serve(fd, host, port):
    listener = socket.socket(fileno=fd)
    while True:
        client, _ = listener.accept()
        try:
            upstream = socket.create_connection((host, port), timeout=10)
            upstream.settimeout(None)
        except OSError:
            client.close()
            continue
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=pump, args=(a, b), daemon=True).start()


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--serve":  # inside the namespace
        serve(int(sys.argv[2]), sys.argv[3], int(sys.argv[4]))
        return
    if len(sys.argv) not in (4, 5):
        sys.stderr.write(__doc__)
        sys.exit(2)
    namespace, host, port = sys.argv[1], sys.argv[2], sys.argv[3]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind(("127.0.0.1", int(sys.argv[4]) if len(sys.argv) == 5 else 0))
    except OSError:
        listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    print(listener.getsockname()[1], flush=True)
    # The socket stays in this machine's namespace; connections out of it
    # are made in NAMESPACE, where the process now runs.
    fd = listener.detach()
    os.set_inheritable(fd, True)
    os.execvp("ip", ["ip", "netns", "exec", namespace, sys.executable, os.path.abspath(__file__),
                     "--serve", str(fd), host, port])


if __name__ == "__main__":
    main()
