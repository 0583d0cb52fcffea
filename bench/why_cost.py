#!/usr/bin/env python3
"""The cost of seeing why a phase was limited (issue 46): what the instrumentation costs the
server, and what the sampler's per-tick reading costs, in QPS.

    python3 bench/why_cost.py [QPSLAB_BINARY] [ROUNDS] [SECONDS]

(a) One sandbox per configuration, all running, measured in rotating order round after round:
    `off` (the sandbox default, performance_schema OFF), `off2` (the same again: the A/A pair
    that shows this machine's noise), `on` (performance_schema=ON with its defaults) and `waits` (`--instrument-waits`: ON plus every wait/% instrument enabled and
    timed), on the same build, oltp_point_select at 4 sessions and oltp_read_write at 8.
(b) The per-tick reading: under the thread pool (thread_handling=pool-of-threads) the sampler
    reads the pool's queue once per report tick; one sandbox, runs with `--report-interval 1`
    (one reading a second) against `--report-interval 10` (one reading a phase), interleaved.
    The begin and finish readings fall outside the measured window and cannot be switched off.

Reports the medians of QPS per arm, the ratio of the medians and the median of the per-round
ratios (robust to drift), with the machine's facts and each command line.
"""
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHAPE = ["--tables", "1", "--table-size", "10000"]
POINTS = [("oltp_point_select", 4), ("oltp_read_write", 8)]
SANDBOXES = {
    "off": [],
    "off2": [],
    "on": ["--set", "performance_schema=ON"],
    "waits": ["--instrument-waits"],
    "pool": ["--set", "thread_handling=pool-of-threads"],
}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def machine_facts(qpslab):
    model = ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    server = ""
    for name in ["mariadbd", "mysqld"]:
        path = shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/local/sbin")
        if path:
            out = subprocess.run([path, "--version"], capture_output=True, text=True).stdout
            m = re.search(r"Ver\s+(\S+)", out)
            server = f"{name} {m.group(1) if m else out.strip()}"
            break
    tool = subprocess.run([qpslab, "--version"], capture_output=True, text=True).stdout.strip()
    return {
        "nproc": os.cpu_count(),
        "cpu_model": model,
        "kernel": platform.release(),
        "server": server,
        "qpslab": tool,
    }


def main():
    qpslab = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                             os.path.join(ROOT, "target/release/qpslab"))
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    seconds = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    home = tempfile.mkdtemp(prefix="qpslab-why-cost-")
    env = dict(os.environ, QPSLAB_LAB=os.path.join(home, "lab"),
               QPSLAB_DB=os.path.join(home, "why.db"))
    began = time.time()

    def sh(args):
        return subprocess.run(args, env=env, check=True, capture_output=True, text=True)

    def one(sandbox, workload, sessions, interval):
        out = os.path.join(home, "r.json")
        sh([qpslab, "run", workload, "--sandbox", sandbox, *SHAPE, "--threads", str(sessions),
            "--time", str(seconds), "--warmup", "2", "--settle", "off",
            "--report-interval", str(interval), "--export-json", out])
        return json.load(open(out))["phases"][0]["qps"]

    facts = machine_facts(qpslab)
    load = [os.getloadavg()]
    for name, extra in SANDBOXES.items():
        sh([qpslab, "server", "start", name, *extra])
    try:
        for name in SANDBOXES:
            sh([qpslab, "prepare", "oltp_read_write", "--sandbox", name, *SHAPE])
        res = {}
        arms = ["off", "off2", "on", "waits"]
        for workload, sessions in POINTS:
            for i in range(rounds):
                # Rotating order: each arm takes each place in the round in turn.
                order = arms[i % 4:] + arms[:i % 4]
                for arm in order:
                    q = one(arm, workload, sessions, 10)
                    res.setdefault((workload, sessions, arm), []).append(q)
                log(f"{workload}:{sessions} round {i + 1}: "
                    + ", ".join(f"{a} {res[(workload, sessions, a)][-1]:.0f}" for a in arms))
        for workload, sessions in POINTS:
            for i in range(rounds):
                order = [10, 1] if i % 2 == 0 else [1, 10]
                for interval in order:
                    q = one("pool", workload, sessions, interval)
                    res.setdefault((workload, sessions, f"tick{interval}"), []).append(q)
                log(f"{workload}:{sessions} pool round {i + 1}: "
                    f"tick10 {res[(workload, sessions, 'tick10')][-1]:.0f}, "
                    f"tick1 {res[(workload, sessions, 'tick1')][-1]:.0f}")
        load.append(os.getloadavg())
    finally:
        for name in SANDBOXES:
            subprocess.run([qpslab, "server", "stop", name, "--rm"], env=env, capture_output=True)
        shutil.rmtree(home, ignore_errors=True)

    med = statistics.median
    print(f"{facts['cpu_model']}, {facts['nproc']} CPUs, kernel {facts['kernel']}, "
          f"{facts['server']}, {facts['qpslab']}")
    print(f"{rounds} rounds, rotating order, {seconds} s runs after 2 s of warm-up, "
          f"1 table x 10000 rows; load average before {load[0]}, after {load[-1]}; "
          f"{time.time() - began:.0f} s in all")
    print()
    print("Sandboxes: " + "; ".join(
        f"`qpslab server start {n}{''.join(' ' + x for x in e)}`" for n, e in SANDBOXES.items()))
    print(f"Each run: `qpslab run WORKLOAD --sandbox NAME {' '.join(SHAPE)} --threads N --time "
          f"{seconds} --warmup 2 --settle off --report-interval 10|1 --export-json FILE`")
    print()
    print("| workload | sessions | QPS off | QPS off2 | QPS on | QPS waits | off2/off A/A (rounds) "
          "| on/off (rounds) | waits/off (rounds) | waits/on (rounds) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for workload, sessions in POINTS:
        r = {a: res[(workload, sessions, a)] for a in ["off", "off2", "on", "waits"]}

        def ratio(b, a):
            per = med(y / x for x, y in zip(r[a], r[b]))
            return f"{med(r[b]) / med(r[a]):.3f} ({per:.3f})"

        print(f"| {workload} | {sessions} | {med(r['off']):.0f} | {med(r['off2']):.0f} | "
              f"{med(r['on']):.0f} | {med(r['waits']):.0f} | {ratio('off2', 'off')} | "
              f"{ratio('on', 'off')} | {ratio('waits', 'off')} | {ratio('waits', 'on')} |")
    print()
    print("| workload (thread pool) | sessions | QPS --report-interval 10 | 1 | 1/10 (rounds) | "
          "per-round ratios |")
    print("|---|---:|---:|---:|---:|---|")
    for workload, sessions in POINTS:
        a, b = res[(workload, sessions, "tick10")], res[(workload, sessions, "tick1")]
        per = [y / x for x, y in zip(a, b)]
        print(f"| {workload} | {sessions} | {med(a):.0f} | {med(b):.0f} | "
              f"{med(b) / med(a):.3f} ({med(per):.3f}) | "
              f"{', '.join(f'{p:.3f}' for p in per)} |")
    print()
    print("Raw QPS per arm, in round order:")
    for (workload, sessions, arm), qs in res.items():
        print(f"- {workload}:{sessions} {arm}: {', '.join(f'{q:.0f}' for q in qs)}")


if __name__ == "__main__":
    main()
