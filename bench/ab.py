#!/usr/bin/env python3
"""Two qpslab builds against each other: interleaved A B / B A runs on one sandbox.

    python3 bench/ab.py OLD_BINARY NEW_BINARY [PAIRS] [WORKLOAD:SESSIONS,...]

Reports per point the medians of QPS and of the client's CPU per query (from each phase's own
client CPU), the ratio of the medians and the median of the per-pair ratios (robust to drift).
Run it twice with the same binary (an A/A check) to see this machine's spread first.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile


def main():
    old, new = sys.argv[1], sys.argv[2]
    pairs = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    spec = sys.argv[4] if len(sys.argv) > 4 else "oltp_point_select:4,oltp_point_select:64,oltp_point_select:256"
    points = [(p.split(":")[0], int(p.split(":")[1])) for p in spec.split(",")]
    home = tempfile.mkdtemp(prefix="qpslab-ab-")
    env = dict(os.environ, QPSLAB_LAB=home, QPSLAB_DB=os.path.join(home, "ab.db"))
    shape = ["--tables", "4", "--table-size", "100000"]

    def sh(args):
        return subprocess.run(args, env=env, check=True, capture_output=True, text=True)

    def one(binary, workload, sessions):
        out = os.path.join(home, "r.json")
        sh([binary, "run", workload, "--sandbox", "ab", *shape, "--threads", str(sessions),
            "--time", "5", "--warmup", "1", "--settle", "off", "--json", out])
        phase = json.load(open(out))["phases"][0]
        if "client_cpu_s" in phase:  # builds before the one JSON form of a run
            cpu = phase["client_cpu_s"]["user"] + phase["client_cpu_s"]["sys"]
        else:
            c = phase["result"]["client_cpu"]
            cpu = c["user_s"] + c["sys_s"]
        return phase["qps"], cpu / (phase["qps"] * phase["duration_s"]) * 1e6

    sh([new, "server", "start", "ab", "--set", "max_connections=2000"])
    try:
        sh([new, "prepare", points[0][0], "--sandbox", "ab", *shape])
        res = {}
        for workload, sessions in points:
            for i in range(pairs):
                order = [("old", old), ("new", new)] if i % 2 == 0 else [("new", new), ("old", old)]
                for name, binary in order:
                    res.setdefault((workload, sessions, name), []).append(one(binary, workload, sessions))
        print(f"{pairs} pairs, A B / B A, 5 s runs, 1 s warm-up; load average {os.getloadavg()}")
        print("| workload | sessions | QPS old | QPS new | ratio (pairs) | client µs/q old | new | ratio (pairs) |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for workload, sessions in points:
            o, w = res[(workload, sessions, "old")], res[(workload, sessions, "new")]
            med = lambda xs, k: statistics.median(x[k] for x in xs)
            pair = lambda k: statistics.median(b[k] / a[k] for a, b in zip(o, w))
            print(f"| {workload} | {sessions} | {med(o, 0):.0f} | {med(w, 0):.0f} | "
                  f"{med(w, 0) / med(o, 0):.2f} ({pair(0):.2f}) | {med(o, 1):.1f} | {med(w, 1):.1f} | "
                  f"{med(w, 1) / med(o, 1):.2f} ({pair(1):.2f}) |")
    finally:
        subprocess.run([new, "server", "stop", "ab", "--rm"], env=env, capture_output=True)


if __name__ == "__main__":
    main()
