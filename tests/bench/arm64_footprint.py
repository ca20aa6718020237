#!/usr/bin/env python3
"""What the arm64 worker costs a phone: binary size and memory while training.

Needs the cross build (deploy/cross-build.sh arm64) and the host build
(deploy/build.sh). Prints, and with --json writes:
  - the stripped arm64 mtworker and the code and data of every shared
    library it loads, grouped (gRPC, OpenSSL, protobuf, ...);
  - mtworker's own code by static library, from a linker map (a relink);
  - peak resident memory of `mtworker --standalone` training LeNet-5 for
    --steps steps on one thread, run by qemu-aarch64, and the same run of
    the x86-64 build. Under user-mode QEMU the process's RSS includes the
    emulator (its translated-code cache, its own libraries), so the guest's
    share is read from /proc/PID/smaps: the mappings below every host
    mapping (QEMU places the guest's address space low, at 0x5500000000 for
    aarch64, under its own PIE image and libraries), sampled every 0.1 s.

  tests/bench/arm64_footprint.py [--build build] [--arm64-build build-arm64]
                                 [--steps 300] [--json FILE]
"""
import argparse
import collections
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

ARM_LIBDIRS = ["/usr/lib/aarch64-linux-gnu", "/lib/aarch64-linux-gnu"]
GROUPS = [("libabsl", "gRPC's abseil"), ("libgrpc", "gRPC"), ("libgpr", "gRPC"),
          ("libupb", "gRPC"), ("libre2", "gRPC"), ("libcares", "gRPC"),
          ("libaddress_sorting", "gRPC"), ("libssl", "OpenSSL"), ("libcrypto", "OpenSSL"),
          ("libprotobuf", "protobuf"), ("libclblast", "CLBlast"), ("libOpenCL", "OpenCL loader"),
          ("libspdlog", "spdlog + fmt"), ("libfmt", "spdlog + fmt"),
          ("libstdc++", "C++ runtime"), ("libgcc_s", "C++ runtime"),
          ("libc.so", "C library"), ("libm.so", "C library"), ("ld-linux", "C library"),
          ("libz.so", "zlib")]
MiB = 1048576.0


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def needed(path):
    return re.findall(r"Shared library: \[(.+?)\]", run(["aarch64-linux-gnu-readelf", "-d", path]))


def code_and_data(path):
    text, data = run(["aarch64-linux-gnu-size", path]).splitlines()[1].split()[:2]
    return int(text) + int(data)


def library_closure(binary):
    seen, todo = {}, needed(binary)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        path = next((os.path.realpath(os.path.join(d, name)) for d in ARM_LIBDIRS
                     if os.path.exists(os.path.join(d, name))), None)
        if path is None:
            sys.exit(f"arm64_footprint: {name} (needed by {binary}) not found in {ARM_LIBDIRS}")
        seen[name] = path
        todo += needed(path)
    return seen


def group_of(name):
    return next((g for prefix, g in GROUPS if name.startswith(prefix)), name)


def own_code_by_library(arm64_build):
    """Sections of mtworker by static library, from a relink with -Map."""
    commands = run(["ninja", "-C", arm64_build, "-t", "commands", "worker/mtworker"]).splitlines()
    link = commands[-1]
    with tempfile.TemporaryDirectory() as tmp:
        out, map_file = os.path.join(tmp, "mtworker"), os.path.join(tmp, "mtworker.map")
        link = link.replace("-o worker/mtworker", f"-o {out} -Wl,-Map={map_file}")
        subprocess.run(link, shell=True, check=True, cwd=arm64_build)
        lines = open(map_file).read().splitlines()
    sizes = collections.Counter()
    section = re.compile(r"^ (\.(?:text|rodata|data|eh_frame|gcc_except_table)\S*)\s*(.*)$")
    for i, line in enumerate(lines):
        m = section.match(line)
        if not m:
            continue
        rest = m.group(2).split() or (lines[i + 1].split() if i + 1 < len(lines) else [])
        if len(rest) < 3 or not rest[0].startswith("0x"):
            continue
        size, obj = int(rest[1], 16), rest[2]
        sizes[os.path.basename(obj.split("(")[0])] += size
    return sizes


def guest_rss_kib(pid):
    """RSS of the guest's mappings: those below the lowest host mapping."""
    maps = []
    current = None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            m = re.match(r"^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$", line)
            if m:
                current = [int(m.group(1), 16), m.group(3), 0]
                maps.append(current)
            elif line.startswith("Rss:") and current:
                current[2] = int(line.split()[1])
    host = [start for start, path, _ in maps
            if path.startswith("/usr/bin/qemu") or "x86_64-linux-gnu" in path or path == "[heap]"]
    lowest_host = min(host) if host else 1 << 64
    return (sum(rss for start, _, rss in maps if start < lowest_host),
            sum(rss for _, _, rss in maps))


def train(argv, env, sample_guest):
    """Runs a standalone training; returns (peak guest KiB or None, peak RSS KiB, report)."""
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "report.json")
        proc = subprocess.Popen(argv + ["--report", report], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        peak_guest = peak_total = 0
        while proc.poll() is None:
            if sample_guest:
                try:
                    guest, total = guest_rss_kib(proc.pid)
                    peak_guest, peak_total = max(peak_guest, guest), max(peak_total, total)
                except (FileNotFoundError, ProcessLookupError):
                    pass
            time.sleep(0.1)
        if proc.returncode != 0:
            sys.exit(f"arm64_footprint: {shlex.join(argv)} failed:\n{proc.stderr.read()}")
        r = json.load(open(report))
    return (peak_guest if sample_guest else None), r["peak_rss_bytes"] / 1024, r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build", help="host build (x86-64 mtworker)")
    ap.add_argument("--arm64-build", default="build-arm64", help="deploy/cross-build.sh's build")
    ap.add_argument("--steps", type=int, default=300, help="LeNet-5 training steps [300]")
    ap.add_argument("--json", help="also write the figures here")
    a = ap.parse_args()
    arm64 = os.path.join(a.arm64_build, "worker", "mtworker")
    host = os.path.join(a.build, "worker", "mtworker")
    for path, how in [(arm64, "deploy/cross-build.sh arm64"), (host, "deploy/build.sh")]:
        if not os.path.exists(path):
            sys.exit(f"arm64_footprint: {path} not built (run {how})")

    with tempfile.TemporaryDirectory() as tmp:
        stripped = os.path.join(tmp, "mtworker")
        run(["aarch64-linux-gnu-strip", "-o", stripped, arm64])
        stripped_bytes = os.path.getsize(stripped)
        own_bytes = code_and_data(stripped)
    groups = collections.Counter()
    for name, path in library_closure(arm64).items():
        groups[group_of(name)] += code_and_data(path)
    groups["mtworker itself"] = own_bytes
    own = own_code_by_library(a.arm64_build)

    env = dict(os.environ)
    env.setdefault("MT_STATE_DIR", tempfile.mkdtemp(prefix="mt-footprint-"))
    args = ["--standalone", "--steps", str(a.steps), "--threads", "1", "--log-level", "warn"]
    guest, qemu_total, arm_report = train(["qemu-aarch64", arm64] + args, env, True)
    _, x86_peak, _ = train([host] + args, env, False)

    print(f"stripped arm64 mtworker: {stripped_bytes / MiB:.2f} MiB")
    print("code + data loaded with it (text + data of each shared library):")
    for name, size in groups.most_common():
        print(f"  {size / MiB:6.2f} MiB  {name}")
    print(f"  {sum(groups.values()) / MiB:6.2f} MiB  in all")
    print("mtworker's own sections by library (linker map):")
    for name, size in own.most_common(10):
        print(f"  {size / 1024:6.0f} KiB  {name}")
    print(f"peak RSS, LeNet-5 standalone, {a.steps} steps, 1 thread:")
    print(f"  arm64 guest under qemu: {guest / 1024:.1f} MiB "
          f"(the qemu process: {qemu_total / 1024:.1f} MiB)")
    print(f"  x86-64 native:          {x86_peak / 1024:.1f} MiB")
    print(f"  arm64 test accuracy {arm_report['test_accuracy']:.4f}")
    if a.json:
        json.dump({"stripped_bytes": stripped_bytes,
                   "loaded_code_and_data_bytes": dict(groups),
                   "own_sections_bytes": dict(own),
                   "steps": a.steps,
                   "arm64_guest_peak_rss_bytes": guest * 1024,
                   "qemu_process_peak_rss_bytes": qemu_total * 1024,
                   "x86_64_peak_rss_bytes": x86_peak * 1024}, open(a.json, "w"), indent=2)


if __name__ == "__main__":
    main()
