#!/usr/bin/env python3
"""Best-found gain of `qpslab tune` against its budget, next to random search with the same budget.

For each budget, starts a fresh sandbox with a small buffer pool (default 8M) and a dataset
several times larger, runs `qpslab tune --search halving` and then, on another fresh sandbox,
`--search random` with the same budget, and prints one line per run: the configuration
crowned (or none), tuned/baseline throughput with its 95% interval from the confirmation,
whether it was significant, the trials and the wall time. Fresh sandboxes keep the two
searches from sharing a warm server.

    python3 bench/tune_budget.py --budgets 120,300 [--pool 8M] [--rows 100000] [--lab DIR]
"""

import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def q(a, env, *args):
    out = subprocess.run([a.qpslab, *args], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"qpslab {' '.join(args[:2])} failed: {out.stderr.strip()[-600:]}")
    return out


def one(a, env, budget, search):
    name = f"tb-{search}-{budget}"
    subprocess.run([a.qpslab, "server", "rm", name], env=env, capture_output=True)
    q(a, env, "server", "start", name, "--set", f"innodb_buffer_pool_size={a.pool}")
    shape = ["--tables", str(a.tables), "--table-size", str(a.rows)]
    q(a, env, "prepare", a.workload, "--sandbox", name, *shape)
    doc = os.path.join(a.out, f"{name}.json")
    started = time.time()
    try:
        q(a, env, "tune", a.workload, "--sandbox", name, *shape, "--threads", str(a.threads),
          "--budget", f"{budget}s", "--trial-time", str(a.trial_time), "--search", search,
          "--json", doc)
    finally:
        subprocess.run([a.qpslab, "server", "stop", name, "--rm"], env=env, capture_output=True)
    took = time.time() - started
    with open(doc) as f:
        d = json.load(f)
    interval = d.get("interval") or [None, None]
    best = " ".join(f"{k}={v}" for k, v in d["best"]["settings"].items()) or "baseline"
    return {
        "budget_s": budget, "search": search, "best": best, "ratio": d.get("ratio"),
        "low": interval[0], "high": interval[1], "significant": d["significant"],
        "trials": len(d["trials"]), "wall_s": round(took),
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--budgets", default="120,300", help="seconds, comma-separated")
    p.add_argument("--workload", default="oltp_write_only")
    p.add_argument("--pool", default="8M")
    p.add_argument("--tables", type=int, default=2)
    p.add_argument("--rows", type=int, default=100000)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--trial-time", type=int, default=5)
    p.add_argument("--lab", help="the lab directory (QPSLAB_LAB)")
    p.add_argument("--out", default=os.environ.get("TMPDIR", "/tmp"))
    p.add_argument("--qpslab", default=os.path.join(ROOT, "target/release/qpslab"))
    a = p.parse_args()
    env = dict(os.environ)
    if a.lab:
        env["QPSLAB_LAB"] = a.lab
    fmt = lambda x: "-" if x is None else f"{x:.2f}"
    for budget in [int(b) for b in a.budgets.split(",")]:
        for search in ("halving", "random"):
            r = one(a, env, budget, search)
            print(f"budget {budget:>4} s  {search:<7}  best {r['best']:<40} "
                  f"tuned/baseline {fmt(r['ratio'])} [{fmt(r['low'])}, {fmt(r['high'])}]  "
                  f"{'significant' if r['significant'] else 'not significant'}  "
                  f"{r['trials']} trials  {r['wall_s']} s", flush=True)


if __name__ == "__main__":
    main()
