#!/usr/bin/env python3
"""qpslab against sysbench 1.0.20, side by side on one sandbox server and one dataset.

Runs the two tools interleaved (A B A B ...) so drift on a noisy machine hits both, and reports
medians and ratios (qpslab / sysbench) of QPS, client CPU per query (user and sys, from
wait4() of the client process), server CPU per query (/proc/<pid>/stat deltas) and client peak
RSS; then prepare time at equal threads. See bench/README.md.
"""

import argparse
import json
import os
import platform
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TICK = os.sysconf("SC_CLK_TCK")

# (workload, sessions) points of the run matrix.
DEFAULT_POINTS = "oltp_point_select:4,oltp_point_select:64,oltp_point_select:256," \
                 "oltp_point_select:1024,oltp_read_write:16"

# The goals of the performance issue: (metric, workload, sessions, bound, "max"/"min").
GOALS = [
    ("client_cpu_us", "oltp_point_select", 4, 0.7, "max"),
    ("client_cpu_us", "oltp_point_select", 64, 0.6, "max"),
    ("client_cpu_us", "oltp_point_select", 1024, 0.35, "max"),
    ("qps", "oltp_point_select", 4, 1.0, "min"),
    ("qps", "oltp_point_select", 256, 1.15, "min"),
    ("qps", "oltp_point_select", 1024, 1.25, "min"),
]

# The many-core goals (placement, metric, sessions, bound, kind): qpslab's defaults at least
# sysbench's QPS everywhere and 1.2x with CPUs of the client's own, at most 0.6x its client CPU
# per query with many sessions; its default prepare at least 1.2x sysbench's rows/s.
MANY_CORE_GOALS = [
    (placement, metric, n, bound, kind)
    for placement, qps_bound in (("shared", 1.0), ("split", 1.2))
    for metric, n, bound, kind in [("qps", n, qps_bound, "min") for n in (32, 256, 1024)]
    + [("client_cpu_us", n, 0.6, "max") for n in (256, 1024)]
]


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def machine_facts():
    model = ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    mem_kib = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                mem_kib = int(line.split()[1])
    sb = subprocess.run(["sysbench", "--version"], capture_output=True, text=True).stdout.strip()
    return {
        "nproc": os.cpu_count(),
        "cpu_model": model,
        "kernel": platform.release(),
        "mem_gib": round(mem_kib / 1024 / 1024, 1),
        "sysbench": sb,
        "python": platform.python_version(),
    }


def loadavg():
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


def proc_cpu_s(pid):
    """User and system CPU seconds of a process (all threads) from /proc/<pid>/stat."""
    with open(f"/proc/{pid}/stat") as f:
        rest = f.read().rsplit(")", 1)[1].split()
    # Fields 14 and 15 (utime, stime) are at 11 and 12 after the ")".
    return int(rest[11]) / TICK, int(rest[12]) / TICK


def raise_nofile():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, 65536) if hard != resource.RLIM_INFINITY else 65536
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


def measured(cmd, server_pid, log_path, env=None):
    """Runs cmd; returns wall seconds, its rusage (wait4) and the server's CPU delta."""
    s0 = proc_cpu_s(server_pid) if server_pid else (0.0, 0.0)
    t0 = time.monotonic()
    with open(log_path, "w") as out:
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env,
                             preexec_fn=raise_nofile)
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - t0
    s1 = proc_cpu_s(server_pid) if server_pid else (0.0, 0.0)
    if p.returncode != 0:
        with open(log_path) as f:
            tail = f.read()[-3000:]
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}):\n{tail}")
    return {
        "wall_s": wall,
        "user_s": ru.ru_utime,
        "sys_s": ru.ru_stime,
        "max_rss_kib": ru.ru_maxrss,
        "voluntary_switches": ru.ru_nvcsw,
        "involuntary_switches": ru.ru_nivcsw,
        "server_user_s": s1[0] - s0[0],
        "server_sys_s": s1[1] - s0[1],
    }


class Bench:
    def __init__(self, a):
        self.a = a
        self.qpslab = os.path.abspath(a.qpslab)
        self.lab = tempfile.mkdtemp(prefix="qpslab-bench-")
        self.env = dict(os.environ, QPSLAB_LAB=self.lab)
        self.name = "bench"
        self.server = None
        self.runs = []
        self.prepares = []

    # --- server -------------------------------------------------------------------------
    def start_server(self, cpus):
        cmd = [self.qpslab, "server", "start", self.name, "--json"]
        if cpus:
            cmd += ["--cpus", cpus]
        for s in self.a.set:
            cmd += ["--set", s]
        out = subprocess.run(cmd, env=self.env, capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError(f"server start failed: {out.stderr}")
        self.server = json.loads(out.stdout)
        log(f"server {self.server['version']} pid {self.server['pid']} cpus {cpus or 'all'}")

    def stop_server(self):
        if self.server:
            subprocess.run([self.qpslab, "server", "stop", self.name], env=self.env,
                           capture_output=True)
            self.server = None

    def sql(self, stmt):
        subprocess.run(["mariadb", "-uroot", f"--socket={self.server['socket']}", "-e", stmt],
                       check=True, capture_output=True)

    # --- tools --------------------------------------------------------------------------
    def sysbench_cmd(self, workload, db, tables, rows, threads, extra, client_cpus):
        cmd = []
        if client_cpus:
            cmd = ["taskset", "-c", client_cpus]
        cmd += ["sysbench", workload, f"--tables={tables}", f"--table-size={rows}",
                f"--mysql-socket={self.server['socket']}", "--mysql-user=root",
                f"--mysql-db={db}", f"--threads={threads}"]
        return cmd + extra

    def qpslab_cmd(self, verb, workload, db, tables, rows, extra, client_cpus):
        # On 2 cores qpslab pins its own event loops (--client-cpus); its CLI rejects a CPU list
        # outside the process's affinity, so it is not started under taskset. In the many-core
        # mode it is placed from outside, like sysbench, and sizes itself to its affinity mask.
        cmd = ["taskset", "-c", client_cpus] if client_cpus and self.a.many_core else []
        cmd += [self.qpslab, verb, workload, "--socket", self.server["socket"], "--user", "root",
                "--database", db, "--tables", str(tables), "--table-size", str(rows)]
        if client_cpus and verb == "run" and not self.a.many_core:
            cmd += ["--client-cpus", client_cpus]
        return cmd + extra

    def split_cpus(self):
        """(server CPUs, client CPUs) of the split placement: on 2 cores CPU 0 and CPU 1; in
        the many-core mode the client gets the last --client-share CPUs, the server the rest."""
        n = os.cpu_count() or 2
        if not self.a.many_core:
            return "0", "1"
        c = max(1, min(self.a.client_share or n // 4, n - 1))
        return f"0-{n - c - 1}", f"{n - c}-{n - 1}"

    def run_one(self, tool, workload, threads, placement, pair):
        client_cpus = self.split_cpus()[1] if placement == "split" else None
        tag = f"{placement}-{workload}-{threads}-{tool}-{pair}"
        log_path = os.path.join(self.lab, tag + ".log")
        time_s = str(self.a.time)
        if tool == "sysbench":
            # sysbench's defaults: --db-ps-mode=auto (server-side prepared statements),
            # --mysql-ignore-errors=1213,1020,1205, --rand-type=special: qpslab's too.
            cmd = self.sysbench_cmd(workload, "sbtest", self.a.tables, self.a.table_size,
                                    threads, [f"--time={time_s}", "--report-interval=0",
                                              "run"], client_cpus)
        else:
            js = os.path.join(self.lab, tag + ".json")
            cmd = self.qpslab_cmd("run", workload, "sbtest", self.a.tables, self.a.table_size,
                                  ["--threads", str(threads), "--time", time_s, "--ps", "on",
                                   "--report-interval", "1", "--db",
                                   os.path.join(self.lab, "results.db"), "--json", js],
                                  client_cpus)
            cmd += self.a.qpslab_arg
        m = measured(cmd, self.server["pid"], log_path, self.env)
        if tool == "sysbench":
            with open(log_path) as f:
                text = f.read()
            q = re.search(r"queries:\s+(\d+)\s+\(([\d.]+) per sec", text)
            e = re.search(r"ignored errors:\s+(\d+)", text)
            queries, qps = int(q.group(1)), float(q.group(2))
            errors = int(e.group(1)) if e else 0
            phase_cpu_us = None
        else:
            with open(js) as f:
                phase = json.load(f)["phases"][0]
            qs = phase["queries"]
            queries = qs["read"] + qs["write"] + qs["other"]
            qps = phase["qps"]
            errors = sum(phase["errors"].values())
            c = phase["result"]["client_cpu"]
            phase_cpu_us = (c["user_s"] + c["sys_s"]) * 1e6 / max(queries, 1)
        r = dict(m, tool=tool, workload=workload, threads=threads, placement=placement,
                 pair=pair, queries=queries, qps=qps, errors=errors,
                 client_cpu_us=(m["user_s"] + m["sys_s"]) * 1e6 / max(queries, 1),
                 client_user_us=m["user_s"] * 1e6 / max(queries, 1),
                 client_sys_us=m["sys_s"] * 1e6 / max(queries, 1),
                 client_sleeps_per_q=m["voluntary_switches"] / max(queries, 1),
                 server_cpu_us=(m["server_user_s"] + m["server_sys_s"]) * 1e6 / max(queries, 1),
                 phase_client_cpu_us=phase_cpu_us)
        log(f"  {tag}: {qps:9.0f} qps, client {r['client_cpu_us']:5.1f} us/q "
            f"({r['client_user_us']:.1f}/{r['client_sys_us']:.1f}), server "
            f"{r['server_cpu_us']:5.1f} us/q, rss {m['max_rss_kib'] / 1024:.1f} MiB")
        self.runs.append(r)

    def prepare_one(self, tool, pair):
        db = "sbprep"
        self.sql(f"DROP DATABASE IF EXISTS {db}; CREATE DATABASE {db}")
        rows = self.a.prepare_rows
        log_path = os.path.join(self.lab, f"prepare-{tool}-{pair}.log")
        # The many-core mode compares defaults: sysbench with one thread per table (its most),
        # qpslab with no --threads (it derives its loaders from the tables and server CPUs).
        threads = self.a.prepare_tables if self.a.many_core else self.a.prepare_threads
        if tool == "sysbench":
            cmd = self.sysbench_cmd("oltp_read_write", db, self.a.prepare_tables, rows,
                                    threads, ["prepare"], None)
        else:
            own = [] if self.a.many_core else ["--threads", str(threads)]
            cmd = self.qpslab_cmd("prepare", "oltp_read_write", db, self.a.prepare_tables, rows,
                                  own, None)
        m = measured(cmd, self.server["pid"], log_path, self.env)
        self.sql(f"DROP DATABASE IF EXISTS {db}")
        r = dict(m, tool=tool, pair=pair, tables=self.a.prepare_tables, rows=rows,
                 threads=threads, qpslab_default=self.a.many_core)
        log(f"  prepare {tool} #{pair}: {m['wall_s']:.1f} s (client cpu "
            f"{m['user_s'] + m['sys_s']:.1f} s, server cpu "
            f"{m['server_user_s'] + m['server_sys_s']:.1f} s)")
        self.prepares.append(r)

    # --- the matrix ---------------------------------------------------------------------
    def points(self):
        out = []
        for p in self.a.points.split(","):
            w, n = p.split(":")
            out.append((w, int(n)))
        return out

    def run_matrix(self):
        for placement in self.a.placements.split(","):
            self.start_server(self.split_cpus()[0] if placement == "split" else None)
            try:
                if not self.prepared:
                    log(f"preparing {self.a.tables} x {self.a.table_size} rows")
                    subprocess.run(self.qpslab_cmd("prepare", "oltp_read_write", "sbtest",
                                                   self.a.tables, self.a.table_size,
                                                   ["--threads", "8", "--create-db"], None),
                                   env=self.env, check=True, capture_output=True)
                    self.prepared = True
                for w, n in self.points():
                    for pair in range(self.a.pairs):
                        for tool in ("qpslab", "sysbench"):
                            self.run_one(tool, w, n, placement, pair)
            finally:
                self.stop_server()

    def run_prepare(self):
        self.start_server(None)
        try:
            for pair in range(self.a.prepare_pairs):
                for tool in ("qpslab", "sysbench"):
                    self.prepare_one(tool, pair)
        finally:
            self.stop_server()


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def summarize(runs, prepares):
    rows = []
    keys = []
    for r in runs:
        k = (r["placement"], r["workload"], r["threads"])
        if k not in keys:
            keys.append(k)
    for k in keys:
        row = {"placement": k[0], "workload": k[1], "threads": k[2]}
        for tool in ("qpslab", "sysbench"):
            rs = [r for r in runs if (r["placement"], r["workload"], r["threads"]) == k
                  and r["tool"] == tool]
            row[tool] = {m: median([r[m] for r in rs]) for m in
                         ("qps", "client_cpu_us", "client_user_us", "client_sys_us",
                          "client_sleeps_per_q", "server_cpu_us", "max_rss_kib", "errors",
                          "phase_client_cpu_us")}
            row[tool]["n"] = len(rs)
        row["ratio"] = {m: (row["qpslab"][m] / row["sysbench"][m]
                            if row["qpslab"][m] is not None and row["sysbench"][m] else None)
                        for m in ("qps", "client_cpu_us", "server_cpu_us", "max_rss_kib")}
        rows.append(row)
    prep = None
    if prepares:
        prep = {}
        for tool in ("qpslab", "sysbench"):
            ps = [p for p in prepares if p["tool"] == tool]
            prep[tool] = {"wall_s": median([p["wall_s"] for p in ps]),
                          "client_cpu_s": median([p["user_s"] + p["sys_s"] for p in ps]),
                          "server_cpu_s": median([p["server_user_s"] + p["server_sys_s"]
                                                  for p in ps]),
                          "n": len(ps)}
        prep["speedup"] = prep["sysbench"]["wall_s"] / prep["qpslab"]["wall_s"]
        p0 = prepares[0]
        prep.update(tables=p0["tables"], rows=p0["rows"], threads=p0["threads"],
                    qpslab_default=p0.get("qpslab_default", False))
    return rows, prep


def goals(rows, prep, many_core=False):
    out = []
    wanted = (MANY_CORE_GOALS if many_core else
              [("shared", metric, n, bound, kind) for metric, _, n, bound, kind in GOALS])
    for placement, metric, n, bound, kind in wanted:
        row = next((r for r in rows if r["placement"] == placement
                    and r["workload"] == "oltp_point_select" and r["threads"] == n), None)
        if row is None or row["ratio"][metric] is None:
            continue
        v = row["ratio"][metric]
        ok = v <= bound if kind == "max" else v >= bound
        where = f"{placement} " if many_core else ""
        out.append({"goal": f"{where}{metric} ratio at {n} {'<=' if kind == 'max' else '>='} "
                            f"{bound}", "value": round(v, 3), "met": ok})
    row = next((r for r in rows if r["placement"] == "shared" and r["threads"] == 1024), None)
    if row and row["qpslab"]["max_rss_kib"]:
        v = row["qpslab"]["max_rss_kib"] / 1024
        out.append({"goal": "client peak RSS at 1024 <= 64 MiB", "value": round(v, 1),
                    "met": v <= 64})
    if prep:
        least = 1.2 if many_core else 1.5
        out.append({"goal": f"prepare speedup >= {least}", "value": round(prep["speedup"], 2),
                    "met": prep["speedup"] >= least})
    return out


def fmt(v, spec):
    return format(v, spec) if v is not None else "-"


def kernel_floor(rows):
    """At the fewest sessions run with shared CPUs: qpslab's kernel time per query against
    sysbench's whole client CPU per query, with how often each client slept per query."""
    few = [r for r in rows if r["placement"] == "shared" and r["workload"] == "oltp_point_select"
           and r["qpslab"]["client_sys_us"] and r["sysbench"]["client_cpu_us"]]
    if not few:
        return None
    r = min(few, key=lambda r: r["threads"])
    q, s = r["qpslab"], r["sysbench"]
    return (f"At {r['threads']} sessions (shared) qpslab's kernel time alone is "
            f"{q['client_sys_us'] / s['client_cpu_us']:.2f} × sysbench's whole client CPU per "
            f"query ({q['client_sys_us']:.1f} of {s['client_cpu_us']:.1f} µs); the clients slept "
            f"{fmt(q['client_sleeps_per_q'], '.2f')} and {fmt(s['client_sleeps_per_q'], '.2f')} "
            f"times per query.")


def table(rows, prep, goal_rows):
    lines = ["| placement | workload | sessions | QPS qpslab | QPS sysbench | QPS ratio | "
             "client µs/q qpslab (user/sys) | client µs/q sysbench (user/sys) | CPU ratio | "
             "client sleeps/q q / s | server µs/q q / s | RSS MiB q / s |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        q, s, x = r["qpslab"], r["sysbench"], r["ratio"]
        lines.append(
            f"| {r['placement']} | {r['workload']} | {r['threads']} | {fmt(q['qps'], '.0f')} | "
            f"{fmt(s['qps'], '.0f')} | {fmt(x['qps'], '.2f')} | {fmt(q['client_cpu_us'], '.1f')} "
            f"({fmt(q['client_user_us'], '.1f')}/{fmt(q['client_sys_us'], '.1f')}) | "
            f"{fmt(s['client_cpu_us'], '.1f')} ({fmt(s['client_user_us'], '.1f')}/"
            f"{fmt(s['client_sys_us'], '.1f')}) | {fmt(x['client_cpu_us'], '.2f')} | "
            f"{fmt(q['client_sleeps_per_q'], '.2f')} / {fmt(s['client_sleeps_per_q'], '.2f')} | "
            f"{fmt(q['server_cpu_us'], '.1f')} / {fmt(s['server_cpu_us'], '.1f')} | "
            f"{fmt(q['max_rss_kib'] and q['max_rss_kib'] / 1024, '.0f')} / "
            f"{fmt(s['max_rss_kib'] and s['max_rss_kib'] / 1024, '.0f')} |")
    if prep:
        at = (f"sysbench at {prep['threads']} threads, qpslab at its default loaders"
              if prep.get("qpslab_default") else f"at {prep['threads']} threads")
        lines += ["", f"prepare {prep['tables']} × {prep['rows']} rows {at} "
                  f"(median of {prep['qpslab']['n']}): qpslab "
                  f"{prep['qpslab']['wall_s']:.1f} s, sysbench {prep['sysbench']['wall_s']:.1f} s,"
                  f" speedup {prep['speedup']:.2f}× (client CPU {prep['qpslab']['client_cpu_s']:.1f}"
                  f" / {prep['sysbench']['client_cpu_s']:.1f} s, server CPU "
                  f"{prep['qpslab']['server_cpu_s']:.1f} / {prep['sysbench']['server_cpu_s']:.1f} s)"]
    if goal_rows:
        title = "goal" if any(g["goal"].startswith(("shared ", "split ")) for g in goal_rows) \
            else "goal (shared CPUs)"
        lines += ["", f"| {title} | value | met |", "|---|---:|---|"]
        lines += [f"| {g['goal']} | {g['value']} | {'yes' if g['met'] else 'NO'} |"
                  for g in goal_rows]
    floor = kernel_floor(rows)
    if floor:
        lines += ["", floor]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--qpslab", default=os.path.join(ROOT, "target/release/qpslab"))
    ap.add_argument("--tables", type=int, default=8)
    ap.add_argument("--table-size", type=int, default=100_000)
    ap.add_argument("--time", type=int, default=10, help="seconds per run")
    ap.add_argument("--pairs", type=int, default=3, help="interleaved pairs per point")
    ap.add_argument("--points", default=DEFAULT_POINTS, help="workload:sessions,...")
    ap.add_argument("--placements", default="shared,split",
                    help="shared (nothing pinned) and/or split (server CPU 0, client CPU 1)")
    ap.add_argument("--prepare-rows", type=int, default=1_000_000)
    ap.add_argument("--prepare-tables", type=int, default=8)
    ap.add_argument("--prepare-threads", type=int, default=8)
    ap.add_argument("--prepare-pairs", type=int, default=2)
    ap.add_argument("--many-core", action="store_true",
                    help="a host of 8+ CPUs: oltp_point_select at 32, 256, 1024 sessions; split "
                         "puts both clients under taskset on the last --client-share CPUs, the "
                         "server on the rest; prepare compares defaults (8 x 500k rows)")
    ap.add_argument("--client-share", type=int, default=0,
                    help="CPUs of the client in the many-core split (default: a quarter)")
    ap.add_argument("--quick", action="store_true",
                    help="prepare 8 x 100k rows, 5 s runs: a smoke run")
    ap.add_argument("--no-runs", action="store_true", help="only the prepare comparison")
    ap.add_argument("--no-prepare", action="store_true", help="skip the prepare comparison")
    ap.add_argument("--set", action="append", default=[], help="server setting NAME=VALUE")
    ap.add_argument("--qpslab-arg", action="append", default=[],
                    help="extra argument for qpslab run (repeatable)")
    ap.add_argument("--json", default=os.path.join(HERE, "results.json"))
    ap.add_argument("--results-md", default=os.path.join(HERE, "RESULTS.md"),
                    help="markdown with facts and table ('' to skip)")
    a = ap.parse_args()
    if a.many_core:
        if a.points == DEFAULT_POINTS:
            a.points = "oltp_point_select:32,oltp_point_select:256,oltp_point_select:1024"
        a.prepare_rows = min(a.prepare_rows, 500_000)
    if a.quick:
        a.prepare_rows = min(a.prepare_rows, 100_000)
        a.time = min(a.time, 5)
    for tool in ("sysbench", "taskset", "mariadb"):
        if not shutil.which(tool):
            sys.exit(f"{tool} is not installed")
    if not os.path.exists(a.qpslab):
        sys.exit(f"{a.qpslab} is missing: cargo build --release -p qpslab")
    # A `kill` ends the run through the same clean-up as Ctrl-C: the sandbox is stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    b = Bench(a)
    b.prepared = False
    facts = machine_facts()
    facts["load_before"] = loadavg()
    started = time.time()
    log(f"facts: {facts}; lab {b.lab}")
    try:
        if not a.no_runs:
            b.run_matrix()
        if not a.no_prepare:
            b.run_prepare()
    finally:
        b.stop_server()
        shutil.rmtree(b.lab, ignore_errors=True)
    facts["load_after"] = loadavg()
    facts["minutes"] = round((time.time() - started) / 60, 1)
    facts["date"] = time.strftime("%Y-%m-%d %H:%M:%S")
    rows, prep = summarize(b.runs, b.prepares)
    goal_rows = goals(rows, prep, a.many_core)
    out = {"facts": facts, "args": vars(a), "summary": rows, "prepare": prep, "goals": goal_rows,
           "runs": b.runs, "prepares": b.prepares}
    with open(a.json, "w") as f:
        json.dump(out, f, indent=1)
    text = table(rows, prep, goal_rows)
    head = (f"{facts['date']}: {facts['nproc']} × {facts['cpu_model']}, kernel {facts['kernel']}, "
            f"{facts['mem_gib']} GiB, {facts['sysbench']}; load average before "
            f"{facts['load_before']}, after {facts['load_after']}; {a.tables} × {a.table_size} "
            f"rows, {a.time:g} s per run, {a.pairs} pairs (medians), {facts['minutes']} min")
    print(head)
    print(text)
    if a.results_md:
        with open(a.results_md, "w") as f:
            f.write("# Latest bench/ results\n\n")
            f.write(f"`{' '.join(sys.argv)}`\n\n{head}\n\n{text}\n")


if __name__ == "__main__":
    main()
