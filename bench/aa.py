#!/usr/bin/env python3
"""A/A check of qpslab's comparisons, and a power check, on real sandboxes.

Each round is one study of three variants measured interleaved over `--threads` and
`--repeats`: `a` and `b` are the same setup (an A/A pair), `bp8m` differs only by an 8M buffer
pool (a real, large change). After each round, `qpslab compare STUDY/a STUDY/b --format json`
gives one A/A comparison per thread count, and `qpslab compare STUDY/a STUDY/bp8m` one power
comparison. The check passes when at most 5% of the A/A throughput comparisons are significant
and every power comparison is. See bench/README.md ("A/A check").
"""

import argparse
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
METRICS = ["tps", "qps", "p95", "p99"]

# All variants read through O_DIRECT, so the 8M pool really reads from storage instead of the
# page cache; the A/A pair is identical in every setting.
SPEC = """name = "{name}"
description = "A/A: a and b are one setup; bp8m has an 8M buffer pool"

[defaults]
workload = "{workload}"
tables = {tables}
table_size = {table_size}
rand_type = "uniform"
warmup = "{warmup}"
time = "{duration:g}s"
repeats = {repeats}

[[variant]]
name = "a"
set = {{ innodb_flush_method = "O_DIRECT" }}

[[variant]]
name = "b"
set = {{ innodb_flush_method = "O_DIRECT" }}
{power}
[sweep]
threads = [{threads}]
"""

POWER = """
[[variant]]
name = "bp8m"
set = { innodb_buffer_pool_size = "8M", innodb_flush_method = "O_DIRECT" }
"""


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


def loadavg():
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


class Check:
    def __init__(self, a):
        self.a = a
        self.qpslab = os.path.abspath(a.qpslab)
        self.dir = tempfile.mkdtemp(prefix="qpslab-aa-")
        self.env = dict(os.environ, QPSLAB_LAB=os.path.join(self.dir, "lab"),
                        QPSLAB_DB=os.path.join(self.dir, "results.db"))
        self.child = None
        self.aa = []      # one dict per A/A comparison (round, key, metric verdicts)
        self.power = []   # one dict per power comparison

    def run(self, cmd, log_name):
        """Runs a qpslab command; its output goes to a log in the scratch directory."""
        path = os.path.join(self.dir, log_name)
        with open(path, "w") as out:
            self.child = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                          env=self.env)
            code = self.child.wait()
            self.child = None
        if code != 0:
            with open(path) as f:
                tail = f.read()[-3000:]
            raise RuntimeError(f"{' '.join(cmd)} failed ({code}):\n{tail}")

    def compare(self, study, a, b):
        out = subprocess.run([self.qpslab, "compare", f"{study}/{a}", f"{study}/{b}",
                              "--format", "json"], env=self.env, capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError(f"compare {study}/{a} {study}/{b}: {out.stderr.strip()}")
        return json.loads(out.stdout)

    def round(self, r):
        a = self.a
        name = f"aa-r{r}"
        spec = os.path.join(self.dir, name + ".toml")
        with open(spec, "w") as f:
            f.write(SPEC.format(name=name, workload=a.workload, tables=a.tables,
                                table_size=a.table_size, warmup=a.warmup, duration=a.duration,
                                repeats=a.repeats, threads=", ".join(a.threads.split(",")),
                                power="" if a.no_power else POWER))
        log(f"round {r}/{a.rounds}: qpslab lab run {name}")
        t0 = time.monotonic()
        self.run([self.qpslab, "lab", "run", spec], name + ".log")
        log(f"round {r}: {time.monotonic() - t0:.0f} s")
        for p in self.compare(name, "a", "b")["points"]:
            self.aa.append(self.point(r, p))
        if not a.no_power:
            for p in self.compare(name, "a", "bp8m")["points"]:
                self.power.append(self.point(r, p))

    @staticmethod
    def point(r, p):
        out = {"round": r, "key": p["key"], "basis": p["basis"],
               "unstable": sum(1 for s in p["a_stability"] + p["b_stability"]
                               if s["stability"] and s["stability"]["reasons"])}
        for m in p["metrics"]:
            out[m["metric"]] = {k: m[k] for k in
                                ["change_pct", "ci_low", "ci_high", "mde_pct", "significant",
                                 "verdict"]}
        return out

    def stop(self):
        # The lab's own Ctrl-C handling stops the sandboxes it started.
        if self.child and self.child.poll() is None:
            self.child.send_signal(signal.SIGINT)
            try:
                self.child.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.child.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def rate(rows, metric):
    seen = [r[metric] for r in rows if metric in r]
    sig = sum(1 for m in seen if m["significant"])
    return sig, len(seen)


def summary(c, facts):
    a = c.a
    lines = [f"{facts['date']}: {facts['nproc']} × {facts['cpu_model']}, kernel "
             f"{facts['kernel']}, {facts['server']}; {facts['qpslab']}; load average before "
             f"{facts['load_before']}, after {facts['load_after']}; {facts['minutes']} min",
             f"{a.rounds} round(s) of {a.workload}, {a.tables} × {a.table_size} rows, threads "
             f"{a.threads}, {a.repeats} repeats a side, {a.duration} s cells, warm-up {a.warmup}",
             ""]
    lines.append("A/A (a vs b, same setup): significant comparisons per metric")
    for m in METRICS:
        sig, n = rate(c.aa, m)
        if n:
            mdes = [r[m]["mde_pct"] for r in c.aa if m in r and r[m]["mde_pct"] is not None]
            inconclusive = sum(1 for r in c.aa if m in r
                               and r[m]["verdict"].startswith("inconclusive"))
            med = f"{statistics.median(mdes):.1f}%" if mdes else "–"
            lines.append(f"  {m:4} {sig}/{n} significant ({100 * sig / n:.0f}%), median MDE "
                         f"{med}, inconclusive {inconclusive}")
    unstable = sum(r["unstable"] for r in c.aa)
    if unstable:
        lines.append(f"  unstable phases among the A/A cells: {unstable}")
    sig, n = rate(c.aa, "tps")
    aa_ok = n >= 1 and sig <= 0.05 * n
    lines.append(f"  A/A throughput: {sig}/{n} significant: "
                 f"{'PASS' if aa_ok else 'FAIL'} (target ≤ 5%)"
                 + ("" if n >= 20 else f"; only {n} comparisons, the check wants ≥ 20"))
    ok = aa_ok
    if not a.no_power:
        lines.append("")
        lines.append("Power (a vs bp8m, 8M buffer pool): throughput")
        for r in c.power:
            t = r.get("tps", {})
            lines.append(f"  round {r['round']} {r['key']}: {t.get('change_pct', 0):+.1f}% "
                         f"[{t.get('ci_low') or 0:+.1f}, {t.get('ci_high') or 0:+.1f}] "
                         f"{t.get('verdict', 'missing')}")
        sig, n = rate(c.power, "tps")
        power_ok = n >= 1 and sig == n
        lines.append(f"  8M significant {sig}/{n}: {'PASS' if power_ok else 'FAIL'} "
                     "(target: every time)")
        ok = ok and power_ok
    return "\n".join(lines), ok


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--qpslab", default=os.path.join(ROOT, "target/release/qpslab"))
    ap.add_argument("--rounds", type=int, default=5, help="studies (A/A comparisons: "
                    "rounds × thread counts)")
    ap.add_argument("--threads", default="1,2,4,8", help="thread counts swept in each study")
    ap.add_argument("--repeats", type=int, default=4, help="repeats a side per thread count")
    ap.add_argument("--duration", type=float, default=3, help="seconds per measured cell")
    ap.add_argument("--warmup", default="2s", help="warm-up of each cell (a spec value)")
    ap.add_argument("--workload", default="oltp_point_select")
    ap.add_argument("--tables", type=int, default=4)
    ap.add_argument("--table-size", type=int, default=50_000)
    ap.add_argument("--no-power", action="store_true", help="skip the 8M buffer pool variant")
    ap.add_argument("--json", help="also write every comparison and the facts here")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: 1 round, threads 1,4, 2 repeats, 1 s cells, 4 × 10k rows")
    a = ap.parse_args()
    if a.quick:
        a.rounds, a.threads, a.repeats, a.duration = 1, "1,4", 2, 1
        a.warmup, a.table_size = "1s", 10_000
    if not os.access(a.qpslab, os.X_OK):
        sys.exit(f"no qpslab binary at {a.qpslab} (cargo build --release -p qpslab)")
    # A `kill` ends the check through the same clean-up as Ctrl-C: sandboxes stopped, files gone.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    c = Check(a)
    facts = machine_facts(c.qpslab)
    facts["load_before"] = loadavg()
    started = time.time()
    log(f"facts: {facts}; scratch {c.dir}")
    try:
        for r in range(1, a.rounds + 1):
            c.round(r)
    except RuntimeError as e:
        log(f"error: {e}")
        sys.exit(1)
    finally:
        c.stop()
    facts["load_after"] = loadavg()
    facts["minutes"] = round((time.time() - started) / 60, 1)
    facts["date"] = time.strftime("%Y-%m-%d %H:%M:%S")
    text, ok = summary(c, facts)
    print(text)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"facts": facts, "args": vars(a), "aa": c.aa, "power": c.power}, f,
                      indent=1)
    sys.exit(0 if ok else 3)


if __name__ == "__main__":
    main()
