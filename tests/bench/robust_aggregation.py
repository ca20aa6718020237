#!/usr/bin/python3
"""Hostile workers among honest ones: final accuracy against a clean run.

A hub and N `mtworker --threads 1` on this machine train LeNet-5 on
Fashion-MNIST for one epoch with fixed batches (`--batch-policy fixed`, so
a seed gives the same batches); in each attacked run the last K workers
(`--setups K/N,...`, default 1/3 and 2/7) send corrupted contributions (the
test build `tests/mtworker_faulty --corrupt-gradients KIND`, the kinds of
tests/faulty_worker/gradient_corruption.h: sign-flip, scale:X, flt-max,
bias:X, alternate-sign, against-average:X, nan-at:N), under every
`--compress` asked for. Prints, per case, the hub's final test accuracy,
its exit code, its stop reason, which workers were dropped (honest ones
are named h*, hostile ones bad*) and how many contributions were clipped.
The criteria (issues 15 and 32): with the hub's defaults, no attacked run
moves accuracy more than 2 points from the clean run of its setup and
compression unless its attackers are dropped, none ends in success (exit
0) with a broken model or one at chance, and no honest worker is dropped.

  tests/bench/robust_aggregation.py [--aggregate auto] [--compress none]
      [--setups 1/3,2/7] [--attacks clean,bias:1,...] [--epochs 1] [--steps N]
      [--hub-flag=--seed=3 ...] [--build build] [--json out.json]

An attack KIND+rejoin:N Leaves and Joins again every N contributions
(`--rejoin-every N`, issue 45's session cycling), e.g. bias:2.5+rejoin:25.
Under --partition (issue 45's non-IID case):
  tests/bench/robust_aggregation.py --setups 1/3 --steps 1500 \
      --attacks clean,bias:1,sign-flip --hub-flag=--partition=dirichlet:0.5

The NaN-per-session case of issue 32 (one attacker, three sessions, one
NaN each in the same step, beside four honest workers):
  tests/bench/robust_aggregation.py --setups 3/7 --attacks clean,nan-at:5
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def supports(binary, flag):
    out = subprocess.run([binary, "--help"], capture_output=True, text=True).stdout
    return flag in out


def run(build, aggregate, compress, attack, hostile, workers, epochs, steps, hub_flags, timeout):
    """One hub and `workers` workers, the last `hostile` corrupting unless attack is clean."""
    hub_bin = os.path.join(build, "hub", "mthub")
    worker_bin = os.path.join(build, "worker", "mtworker")
    faulty_bin = os.path.join(build, "tests", "mtworker_faulty")  # mtworker plus --corrupt-gradients
    # Loopback only: plaintext where the build has TLS, so the bench does
    # not measure certificates.
    hub_plain = ["--insecure"] if supports(hub_bin, "--insecure") else []
    worker_plain = ["--insecure"] if supports(worker_bin, "--insecure") else []
    with tempfile.TemporaryDirectory() as out:
        port_file = os.path.join(out, "port")
        length = ["--steps", str(steps)] if steps else ["--epochs", str(epochs)]
        hub_cmd = [hub_bin, "--workers", str(workers), "--batch-policy", "fixed", "--bind", "127.0.0.1", "--port", "0", "--port-file", port_file,
                   "--model", "lenet5", "--dataset", "fashion-mnist", *length, "--compress", compress,
                   "--aggregate", aggregate, "--log-every", "60", "--report", os.path.join(out, "hub.json"),
                   "--events", os.path.join(out, "events.jsonl"), *hub_plain, *hub_flags]
        hub_log = open(os.path.join(out, "hub.log"), "w")
        hub = subprocess.Popen(hub_cmd, stdout=hub_log, stderr=subprocess.STDOUT)
        procs = []
        started = time.time()
        try:
            for _ in range(600):
                if os.path.exists(port_file) and open(port_file).read().strip():
                    break
                if hub.poll() is not None:
                    raise RuntimeError("hub did not start: " + open(os.path.join(out, "hub.log")).read()[-2000:])
                time.sleep(0.1)
            port = open(port_file).read().strip()
            for i in range(workers):
                bad = i >= workers - hostile and attack != "clean"
                cmd = [faulty_bin if bad else worker_bin, "--hub", f"127.0.0.1:{port}", "--threads", "1",
                       "--name", f"bad{i}" if bad else f"h{i}", "--connect-timeout", "30", *worker_plain]
                if bad:
                    # KIND+rejoin:N: the attacker Leaves and Joins again
                    # every N contributions (issue 45's session cycling).
                    kind, _, rejoin = attack.partition("+rejoin:")
                    cmd += ["--corrupt-gradients", kind] + (["--rejoin-every", rejoin] if rejoin else [])
                procs.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            try:
                code = hub.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                code = "timeout"
            for w in procs:
                try:
                    w.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    pass
        finally:
            for p in [hub, *procs]:
                if p.poll() is None:
                    p.kill()
        report = {}
        if os.path.exists(os.path.join(out, "hub.json")):
            report = json.load(open(os.path.join(out, "hub.json")))
        events = [json.loads(line) for line in open(os.path.join(out, "events.jsonl")) if line.strip()]
        details = report.get("details", report)
        dropped = [e for e in events if e.get("event") == "worker_dropped"]
        clipped = {w.get("name"): (w.get("clipped_segments", 0), round(w.get("alignment", 0), 3),
                                   round(w.get("persistence_peak", 0), 3))
                   for w in details.get("workers", [])}
        return {
            "aggregate": aggregate,
            "compress": compress,
            "attack": attack,
            "setup": f"{hostile}/{workers}",
            "exit": code,
            "seconds": round(time.time() - started, 1),
            # -1: not evaluated (a run stopped before its end).
            "test_accuracy": (report.get("test_accuracy") if (report.get("test_accuracy") or 0) >= 0
                              else None),
            "test_loss": report.get("test_loss"),
            "steps": report.get("steps"),
            "stop_reason": report.get("stop_reason"),
            # The hub's own CPU per step for combining and applying (what
            # --aggregate costs).
            "reduce_ms_per_step": (round(1e3 * details["hub_reduce_seconds"] / report["steps"], 3)
                                   if report.get("steps") else None),
            "refused": details.get("refused_contributions"),
            "steps_refused": details.get("steps_refused"),
            "dropped": [e.get("name") or e.get("worker") for e in dropped],
            "clipped": clipped,
            "dropped_why": [e.get("detail") for e in dropped],
            "log_tail": "" if code == 0 else open(os.path.join(out, "hub.log")).read()[-1500:],
        }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--aggregate", default="auto")
    ap.add_argument("--compress", default="none")
    ap.add_argument("--setups", default="1/3,2/7", help="K/N: K hostile workers of N")
    ap.add_argument("--attacks", default="clean,sign-flip,scale:1e4,flt-max,bias:1,bias:0.5,alternate-sign,"
                                         "against-average:1")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--steps", type=int, default=0)
    ap.add_argument("--hub-flag", action="append", default=[], help="extra mthub flag, e.g. --hub-flag=--seed=3")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--json")
    a = ap.parse_args()
    hub_flags = [f for flag in a.hub_flag for f in flag.split("=", 1)]
    results = []
    cases = [(aggregate, compress, setup) for aggregate in a.aggregate.split(",")
             for compress in a.compress.split(",") for setup in a.setups.split(",")]
    for aggregate, compress, setup in cases:
        hostile, workers = (int(x) for x in setup.split("/"))
        clean = None
        for attack in a.attacks.split(","):
            print(f"--aggregate {aggregate} --compress {compress} {setup}: {attack}", file=sys.stderr,
                  flush=True)
            r = run(a.build, aggregate, compress, attack, hostile, workers, a.epochs, a.steps, hub_flags,
                    a.timeout)
            if attack == "clean":
                clean = r["test_accuracy"]
            acc = r["test_accuracy"]
            r["delta_points"] = (round(100 * (acc - clean), 1)
                                 if acc is not None and clean is not None else None)
            results.append(r)
            print(f"  accuracy {acc} (clean {clean}) exit {r['exit']} in {r['seconds']} s, hub reduce "
                  f"{r['reduce_ms_per_step']} ms/step; "
                  f"refused {r['refused']} dropped {r['dropped']} clipped {r['clipped']}; "
                  f"{r['stop_reason']}", file=sys.stderr, flush=True)
            if r["log_tail"] and r["exit"] not in (0, 1):
                print(r["log_tail"], file=sys.stderr)
    print("| aggregate | compress | hostile | attack | test accuracy | vs clean (points) | hub exit | dropped | "
          "stop reason |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        acc = "-" if r["test_accuracy"] is None else f"{r['test_accuracy']:.4f}"
        delta = "" if r["delta_points"] is None or r["attack"] == "clean" else f"{r['delta_points']:+.1f}"
        print(f"| {r['aggregate']} | {r['compress']} | {r['setup']} | {r['attack']} | {acc} | {delta} | {r['exit']} | "
              f"{', '.join(map(str, r['dropped'])) or '-'} | {r['stop_reason']} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
