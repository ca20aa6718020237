#!/usr/bin/python3
"""One hostile worker of three: final accuracy against a clean run.

A hub and three `mtworker --threads 1` on this machine train LeNet-5 on
Fashion-MNIST for one epoch; in each attacked run the third worker sends
corrupted contributions (the test build `tests/mtworker_faulty
--corrupt-gradients sign-flip | scale:1e4 | flt-max`), under every `--compress`
(none, fp16, int8). Prints, per case, the hub's final test accuracy, its
exit code, its stop reason, and how many contributions were refused (the
worker named and dropped) or clipped. The issue 15 criterion: with the
hub's defaults, no attacked run moves accuracy more than 2 points from
the clean run of its compression, and none ends in success (exit 0) with a
broken model.

  tests/bench/robust_aggregation.py [--aggregate auto] [--compress none,fp16,int8]
      [--attacks clean,sign-flip,scale:1e4,flt-max] [--epochs 1] [--steps N]
      [--hub-flag=--batch-policy=fixed ...] [--build build] [--json out.json]
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


def run(build, aggregate, compress, attack, epochs, steps, hub_flags, timeout):
    """One hub and three workers, the last one corrupting unless attack is clean."""
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
        hub_cmd = [hub_bin, "--workers", "3", "--bind", "127.0.0.1", "--port", "0", "--port-file", port_file,
                   "--model", "lenet5", "--dataset", "fashion-mnist", *length, "--compress", compress,
                   "--aggregate", aggregate, "--log-every", "60", "--report", os.path.join(out, "hub.json"),
                   "--events", os.path.join(out, "events.jsonl"), *hub_plain, *hub_flags]
        hub_log = open(os.path.join(out, "hub.log"), "w")
        hub = subprocess.Popen(hub_cmd, stdout=hub_log, stderr=subprocess.STDOUT)
        workers = []
        started = time.time()
        try:
            for _ in range(600):
                if os.path.exists(port_file) and open(port_file).read().strip():
                    break
                if hub.poll() is not None:
                    raise RuntimeError("hub did not start: " + open(os.path.join(out, "hub.log")).read()[-2000:])
                time.sleep(0.1)
            port = open(port_file).read().strip()
            for i in range(3):
                hostile = i == 2 and attack != "clean"
                cmd = [faulty_bin if hostile else worker_bin, "--hub", f"127.0.0.1:{port}", "--threads", "1",
                       "--name", f"w{i}", "--connect-timeout", "30", *worker_plain]
                if hostile:
                    cmd += ["--corrupt-gradients", attack]
                workers.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            try:
                code = hub.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                code = "timeout"
            for w in workers:
                try:
                    w.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    pass
        finally:
            for p in [hub, *workers]:
                if p.poll() is None:
                    p.kill()
        report = {}
        if os.path.exists(os.path.join(out, "hub.json")):
            report = json.load(open(os.path.join(out, "hub.json")))
        events = [json.loads(line) for line in open(os.path.join(out, "events.jsonl")) if line.strip()]
        details = report.get("details", report)
        dropped = [e for e in events if e.get("event") == "worker_dropped"]
        clipped = {w.get("name"): (w.get("clipped_segments", 0), round(w.get("alignment", 0), 3))
                   for w in details.get("workers", [])}
        return {
            "aggregate": aggregate,
            "compress": compress,
            "attack": attack,
            "exit": code,
            "seconds": round(time.time() - started, 1),
            "test_accuracy": report.get("test_accuracy"),
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
    ap.add_argument("--compress", default="none,fp16,int8")
    ap.add_argument("--attacks", default="clean,sign-flip,scale:1e4,flt-max")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--steps", type=int, default=0)
    ap.add_argument("--hub-flag", action="append", default=[], help="extra mthub flag, e.g. --hub-flag=--seed=3")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--json")
    a = ap.parse_args()
    hub_flags = [f for flag in a.hub_flag for f in flag.split("=", 1)]
    results = []
    for aggregate in a.aggregate.split(","):
        for compress in a.compress.split(","):
            clean = None
            for attack in a.attacks.split(","):
                print(f"--aggregate {aggregate} --compress {compress}: {attack}", file=sys.stderr, flush=True)
                r = run(a.build, aggregate, compress, attack, a.epochs, a.steps, hub_flags, a.timeout)
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
    print("| aggregate | compress | attack | test accuracy | vs clean (points) | hub exit | dropped | stop reason |")
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        acc = "-" if r["test_accuracy"] is None else f"{r['test_accuracy']:.4f}"
        delta = "" if r["delta_points"] is None or r["attack"] == "clean" else f"{r['delta_points']:+.1f}"
        print(f"| {r['aggregate']} | {r['compress']} | {r['attack']} | {acc} | {delta} | {r['exit']} | "
              f"{', '.join(map(str, r['dropped'])) or '-'} | {r['stop_reason']} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
