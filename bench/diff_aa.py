#!/usr/bin/env python3
"""A/A check of `qpslab diff`: one side against itself, repeatedly, on a real log.

Runs `qpslab diff LOG --a SIDE --b SIDE --format json` `--runs` times and counts the classes
called significant (any, not only regressions). With Holm's correction across the classes, a
sound interval flags a class in well under 5% of runs. Prints one line per run (per class:
B/A [95% interval], `*` when significant) and the totals.

    python3 bench/diff_aa.py --log events-slow.log --side lab/r --runs 12 [--lab DIR]

The log and side come from the partitioned example (examples/partitioned/README.md).
"""

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--log", required=True)
    p.add_argument("--side", required=True, help="a DSN or a sandbox NAME[/DB]")
    p.add_argument("--runs", type=int, default=12)
    p.add_argument("--max-time-per-class", default="2")
    p.add_argument("--lab", help="the lab directory of the sandbox (QPSLAB_LAB)")
    p.add_argument("--qpslab", default=os.path.join(ROOT, "target/release/qpslab"))
    a = p.parse_args()
    env = dict(os.environ)
    if a.lab:
        env["QPSLAB_LAB"] = a.lab
    compared = flagged = 0
    for i in range(a.runs):
        out = subprocess.run(
            [a.qpslab, "diff", a.log, "--a", a.side, "--b", a.side, "--format", "json",
             "--max-time-per-class", a.max_time_per_class],
            env=env, capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"run {i + 1}: qpslab diff failed: {out.stderr.strip()}")
        classes = json.loads(out.stdout)["classes"]
        cells = []
        for c in classes:
            if c.get("ratio") is None:
                continue
            compared += 1
            flagged += bool(c["significant"])
            star = "*" if c["significant"] else ""
            cells.append(f"{c['ratio']:.3f} [{c['ci_low']:.3f}, {c['ci_high']:.3f}]{star}")
        print(f"run {i + 1:2}: " + "  ".join(cells), flush=True)
    print(f"{flagged} of {compared} A/A class comparisons significant "
          f"({100.0 * flagged / max(compared, 1):.1f}%)")


if __name__ == "__main__":
    main()
