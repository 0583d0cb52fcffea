#!/usr/bin/env python3
"""A/A coverage of the anytime-valid intervals of studies with a precision target (issue 35).

A study with `precision` looks at each comparison after every round and stops when it is
precise. An ordinary t interval recomputed after every round is then too narrow: the chance
that it excludes "no change" at some round, for two identical setups, is far above 5%. qpslab's
interval is a confidence sequence (crates/stats/src/sequence.rs) and must keep that chance at
or below 5%.

The A/A studies are resampled from stored real intervals: the per-second throughput of a real
qpslab run (`--collect` measures one, 120 s of oltp_point_select on a sandbox through
`qpslab lab run`, and stores its intervals in bench/aa_intervals.json; without it the stored
file is used). A round takes two adjacent blocks of `--block` seconds (a cell of each side,
next to each other as in a study's round, so they share the machine's drift), a coin decides
which is A, and the round's value is ln(B/A), whose true mean is exactly 0. Each of `--studies`
studies runs `--rounds` rounds and is looked at after every round from the third; it misses
when its interval excludes 0 at any look. The boundary is computed here independently of the
Rust code, from the published formula.

    python3 bench/aa_sequential.py                     # from bench/aa_intervals.json
    python3 bench/aa_sequential.py --collect           # measure new intervals first (~3 min)
    python3 bench/aa_sequential.py --rounds 30 --look-every 10   # and at planned looks

With `--look-every N` it also judges the repeated confidence intervals of a study that decides
only at planned looks (every N rounds and at the last), Pocock's constant computed here by
numerical integration, independently of crates/stats/src/looks.rs.

Exit 0 when the anytime-valid (and looks') miss rate is at most 5%, 3 otherwise.
"""

import argparse
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
STORED = os.path.join(HERE, "aa_intervals.json")
ALPHA = 0.05


def betacf(a, b, x):
    """Continued fraction of the regularized incomplete beta (Numerical Recipes, 6.4)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > 1e-300 else 1e-300)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > 1e-300 else 1e-300)
        c = 1.0 + aa / c if abs(1.0 + aa / c) > 1e-300 else 1e-300
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > 1e-300 else 1e-300)
        c = 1.0 + aa / c if abs(1.0 + aa / c) > 1e-300 else 1e-300
        de = d * c
        h *= de
        if abs(de - 1.0) < 1e-14:
            break
    return h


def betai(a, b, x):
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(1 - x)
    if x < (a + 1) / (a + b + 2):
        return math.exp(lbt) * betacf(a, b, x) / a
    return 1.0 - math.exp(lbt) * betacf(b, a, 1 - x) / b


def t_cdf(t, df):
    x = df / (df + t * t)
    tail = 0.5 * betai(df / 2.0, 0.5, x)
    return 1.0 - tail if t > 0 else tail


def t_quantile(p, df):
    lo, hi = -1e4, 1e4
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def z_quantile(p):
    from statistics import NormalDist

    return NormalDist().inv_cdf(p)


def anytime_multiplier(n, planned):
    """Half-width in units of s/sqrt(n): Robbins' normal mixture (Howard et al. 2021, eq. 14)
    tuned for `planned` rounds, widened by t(1-a/4, n-1)/z(1-a/4) for the estimated spread."""
    a = -2.0 * math.log(ALPHA)
    r2 = (a + math.log(a + 1.0)) / planned
    nr = n * r2 + 1.0
    z = math.sqrt(2.0 * nr / (n * r2) * math.log(math.sqrt(nr) / ALPHA))
    q = 1.0 - ALPHA / 4.0
    return z * t_quantile(q, n - 1) / z_quantile(q)


def pocock_c(looks, grid=161):
    """Pocock's constant for `looks` (rounds, increasing) at ALPHA: the c with
    P(some |S_n| >= c*sqrt(n)) = ALPHA for sums of N(0, 1), by carrying the sum's density from
    look to look on a grid (Armitage, McPherson and Rowe 1969) and bisection."""
    phi = lambda x: math.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)

    def crossing(c):
        def pts(n):
            b = c * math.sqrt(n)
            h = 2 * b / (grid - 1)
            return [-b + i * h for i in range(grid)], h

        w = lambda i, h: h / 2 if i in (0, grid - 1) else h
        xs, h = pts(looks[0])
        f = [phi(x / math.sqrt(looks[0])) / math.sqrt(looks[0]) for x in xs]
        prev = looks[0]
        for n in looks[1:]:
            d = math.sqrt(n - prev)
            ys, hy = pts(n)
            f = [sum(w(i, h) * fx * phi((y - x) / d) / d for i, (x, fx) in enumerate(zip(xs, f))) for y in ys]
            xs, h, prev = ys, hy, n
        return 1 - sum(w(i, h) * fx for i, fx in enumerate(f))

    lo, hi = z_quantile(1 - ALPHA / 2), 6.0
    for _ in range(30):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if crossing(mid) > ALPHA else (lo, mid)
    return 0.5 * (lo + hi)


def look_multiplier(c, n):
    """Pocock's c widened for the estimated spread: c * t(q, n-1)/z(q), q = 1 - (1 - Phi(c))/4."""
    from statistics import NormalDist

    q = 1.0 - (1.0 - NormalDist().cdf(c)) / 4.0
    return c * t_quantile(q, n - 1) / z_quantile(q)


def collect(qpslab, seconds):
    """Measures one real run of `seconds` and returns its per-interval throughput."""
    tmp = tempfile.mkdtemp(prefix="qpslab-aa-seq-")
    try:
        env = dict(os.environ, QPSLAB_LAB=os.path.join(tmp, "lab"), QPSLAB_DB=os.path.join(tmp, "db.sqlite"))
        spec = os.path.join(tmp, "one.toml")
        with open(spec, "w") as f:
            f.write(
                'name = "intervals"\n[defaults]\nworkload = "oltp_point_select"\ntables = 1\n'
                'table_size = 10000\nthreads = 2\nwarmup = "5s"\ntime = "%ds"\nretries = 0\n' % seconds
            )
        subprocess.run([qpslab, "lab", "run", spec], env=env, check=True, stdout=subprocess.DEVNULL)
        out = subprocess.run(
            [qpslab, "lab", "show", "intervals", "--format", "json"], env=env, check=True, capture_output=True
        ).stdout
        phase = json.loads(out)["cells"][0]["run"]["phases"][0]
        samples = phase["result"]["samples"]
        return [s["events"] / s["interval_s"] for s in samples if s.get("interval_s", 0) > 0]
    finally:
        # `lab run` stopped its sandbox when the study ended.
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--collect", action="store_true", help="measure new intervals first")
    ap.add_argument("--seconds", type=int, default=120, help="length of the measured run")
    ap.add_argument("--qpslab", default=os.path.join(ROOT, "target", "debug", "qpslab"))
    ap.add_argument("--block", type=int, default=3, help="seconds per cell")
    ap.add_argument("--rounds", type=int, default=20, help="rounds per study (max_repeats)")
    ap.add_argument("--studies", type=int, default=400)
    ap.add_argument("--seed", type=int, default=35)
    ap.add_argument("--look-every", type=int, default=0, help="also judge repeated confidence intervals at looks every N rounds and at --rounds")
    a = ap.parse_args()
    if a.collect:
        xs = collect(a.qpslab, a.seconds)
        with open(STORED, "w") as f:
            json.dump({"what": "per-second tps of one oltp_point_select run, 2 sessions", "tps": xs}, f)
            f.write("\n")
    with open(STORED) as f:
        xs = [x for x in json.load(f)["tps"] if x > 0]
    rng = random.Random(a.seed)
    k = a.block
    starts = len(xs) - 2 * k + 1
    if starts < 1:
        sys.exit("too few intervals for two blocks")
    mult = {n: anytime_multiplier(n, a.rounds) for n in range(3, a.rounds + 1)}
    tq = {n: t_quantile(0.975, n - 1) for n in range(3, a.rounds + 1)}
    looks = []
    if a.look_every:
        looks = list(range(a.look_every, a.rounds, a.look_every)) + [a.rounds]
        c = pocock_c(looks)
        lmult = {n: look_multiplier(c, n) for n in looks}
    seq_miss = fixed_miss = look_miss = 0
    for _ in range(a.studies):
        d = []
        s_missed = f_missed = l_missed = False
        for n in range(1, a.rounds + 1):
            i = rng.randrange(starts)
            x = sum(xs[i : i + k]) / k
            y = sum(xs[i + k : i + 2 * k]) / k
            d.append(math.log(y / x) if rng.random() < 0.5 else math.log(x / y))
            if n < 3:
                continue
            m = sum(d) / n
            sd = math.sqrt(sum((v - m) ** 2 for v in d) / (n - 1))
            se = sd / math.sqrt(n)
            s_missed |= abs(m) > mult[n] * se
            f_missed |= abs(m) > tq[n] * se
            if n in looks:
                l_missed |= abs(m) > lmult[n] * se
        seq_miss += s_missed
        fixed_miss += f_missed
        look_miss += l_missed
    sr, fr = seq_miss / a.studies, fixed_miss / a.studies
    print(f"{len(xs)} stored intervals, {a.studies} A/A studies of {a.rounds} rounds of {k}-s cells, looked at after every round from the third")
    print(f"anytime-valid interval: missed 0 in {seq_miss}/{a.studies} = {100 * sr:.1f}% (target <= 5%)")
    print(f"fixed-n t interval recomputed each round: missed 0 in {fixed_miss}/{a.studies} = {100 * fr:.1f}%")
    lr = look_miss / a.studies
    if looks:
        print(f"repeated confidence interval at looks {looks} (Pocock c = {c:.3f}): missed 0 in {look_miss}/{a.studies} = {100 * lr:.1f}% (target <= 5%)")
    sys.exit(0 if sr <= ALPHA and lr <= ALPHA else 3)


if __name__ == "__main__":
    main()
