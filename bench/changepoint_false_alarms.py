#!/usr/bin/env python3
"""False alarms and power of qpslab's change point detection, with Apache Otava beside it.

Makes `--series` flat series of `--points` runs (no change: any change point found is a false
alarm) under two kinds of noise, normal (3 %) and right-skewed (lognormal, sigma 0.3: a few
runs far slower than the rest), and as many series with the shape of issue 51 (12 runs at A,
8 at A - 15 %, 10 back at A, noise 3 %: found means both changes at runs 12 and 20 exactly).
Each series goes to qpslab at the default options (`--example changepoints` of the stats crate)
and, when `import otava` works, to Otava's E-divisive (`compute_change_points_orig`) and its
default t-test variant (`compute_change_points`, window 50) at 0.01 and at its own default
0.001, through crates/stats/tests/otava_peer.py. Prints each rate with its 95 % Wilson
interval. Needs Python 3's standard library, cargo, and apache-otava for the Otava columns.

  python3 bench/changepoint_false_alarms.py [--series 200] [--points 30] [--seed 51]
"""

import argparse
import math
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DRIVER = os.path.join(ROOT, "crates", "stats", "tests", "otava_peer.py")


def flat_normal(rng, n):
    return [1000.0 * (1.0 + 0.03 * rng.gauss(0.0, 1.0)) for _ in range(n)]


def flat_skewed(rng, n):
    return [1000.0 * math.exp(0.3 * rng.gauss(0.0, 1.0)) for _ in range(n)]


def two_steps(rng, _n):
    levels = [1000.0] * 12 + [850.0] * 8 + [1000.0] * 10
    return [x * (1.0 + 0.03 * rng.gauss(0.0, 1.0)) for x in levels]


def run(cmd, series):
    text = "".join(" ".join(repr(x) for x in xs) + "\n" for xs in series)
    out = subprocess.run(cmd, input=text, capture_output=True, text=True, cwd=ROOT)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{out.stderr}")
    lines = out.stdout.splitlines()
    assert len(lines) == len(series), (cmd, len(lines))
    return [[int(i) for i in line.split()] for line in lines]


def wilson(k, n, z=1.96):
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--series", type=int, default=200)
    ap.add_argument("--points", type=int, default=30)
    ap.add_argument("--seed", type=int, default=51)
    args = ap.parse_args()

    subprocess.run(
        ["cargo", "build", "--release", "-q", "-p", "qpslab-stats", "--example", "changepoints"],
        cwd=ROOT, check=True,
    )
    tools = [("qpslab (E-divisive, permutations, 0.01)", [os.path.join(ROOT, "target", "release", "examples", "changepoints")])]
    if subprocess.run([sys.executable, "-c", "import otava.analysis"], capture_output=True).returncode == 0:
        py = [sys.executable, DRIVER]
        tools += [
            ("Otava E-divisive (permutations, 0.01)", py + ["edivisive", "0.01", "1"]),
            ("Otava t-test variant (0.01)", py + ["ttest", "0.01", "50"]),
            ("Otava t-test variant (0.001, its default)", py + ["ttest", "0.001", "50"]),
        ]
    else:
        print("NOTE: python cannot import otava (pip install apache-otava): Otava columns left out")

    cases = [
        ("flat, normal noise 3%", flat_normal, "false alarms", lambda found: bool(found)),
        ("flat, lognormal noise (sigma 0.3)", flat_skewed, "false alarms", lambda found: bool(found)),
        ("12 A, 8 at A-15%, 10 A, noise 3%", two_steps, "found [12, 20]", lambda found: found == [12, 20]),
    ]
    print(f"{args.series} series of {args.points} runs each (issue 51 shape: 30 runs), seed {args.seed}\n")
    print("| series | what is counted | tool | count | rate | 95% interval |")
    print("|---|---|---|---:|---:|---|")
    for name, make, what, counts in cases:
        rng = random.Random(f"{args.seed}/{name}")
        series = [make(rng, args.points) for _ in range(args.series)]
        for tool, cmd in tools:
            k = sum(1 for found in run(cmd, series) if counts(found))
            lo, hi = wilson(k, args.series)
            print(f"| {name} | {what} | {tool} | {k}/{args.series} | {k / args.series:.3f} | {lo:.3f}–{hi:.3f} |", flush=True)


if __name__ == "__main__":
    main()
