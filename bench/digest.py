#!/usr/bin/env python3
"""`qpslab digest` against `pt-query-digest` on one big, realistic MariaDB slow log.

    python3 bench/digest.py [--size-mb 64] [--rounds 3] [--seed-log FILE] [--keep-log FILE]

1. Captures real entries: a sandbox (`target/release/qpslab server start`, temporary lab) with
   the slow log on at long_query_time=0 and log_slow_verbosity=query_plan,innodb while
   `qpslab run oltp_read_write` runs 4 sessions for 5 s (text protocol, so every statement is
   logged as a query), unless --seed-log gives such a log.
2. Grows it to --size-mb by writing the captured entries again and again with new literals
   (every number in a statement replaced by a random one of similar size, strings by random
   letters of the same length), new thread ids, rising timestamps and jittered query times.
   The log is deleted at the end unless --keep-log names where to keep it.
3. Runs `qpslab digest LOG --format json` and `pt-query-digest LOG` (default report), interleaved,
   --rounds times each, output to /dev/null; per run: wall time (MB/s) and peak RSS
   (`/usr/bin/time -f %M`).
Prints the machine's facts, the medians, the ratio and a Markdown table for bench/RESULTS.md.
Needs Python 3's standard library, GNU time (/usr/bin/time), percona-toolkit and a release build (`cargo build --release
-p qpslab`).
"""
import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QPSLAB = os.path.join(ROOT, "target", "release", "qpslab")
ENTRY_START = re.compile(r"^# (Time|User@Host): ", re.M)
NUMBER = re.compile(r"(?<![A-Za-z0-9_$.])\d+(\.\d+)?")
STRING = re.compile(r"'([^'\\]|\\.)*'")


def sh(args, env=None):
    return subprocess.run(args, env=env, check=True, capture_output=True, text=True).stdout


def capture(tmp):
    """A slow log of oltp_read_write from a fresh sandbox."""
    env = dict(os.environ, QPSLAB_LAB=os.path.join(tmp, "lab"), QPSLAB_DB=os.path.join(tmp, "b.db"))
    sh([QPSLAB, "server", "start", "digest-bench"], env)
    try:
        sock = [l.split()[-1] for l in sh([QPSLAB, "server", "list"], env).splitlines() if l.startswith("digest-bench")][0]
        mysql = ["mariadb", "--socket", sock, "-uroot", "--password=" + open(os.path.join(tmp, "lab", "sandboxes", "digest-bench", "password")).read().strip()]
        datadir = sh(mysql + ["-N", "-e", "SELECT @@datadir"]).strip()
        log = os.path.join(datadir, "bench-slow.log")
        shape = ["--tables", "4", "--table-size", "10000"]
        sh([QPSLAB, "prepare", "oltp_read_write", "--sandbox", "digest-bench", *shape], env)
        sh(mysql + ["-e", f"SET GLOBAL slow_query_log_file='{log}', long_query_time=0, "
                          "log_slow_verbosity='query_plan,innodb', slow_query_log=1"])
        sh([QPSLAB, "run", "oltp_read_write", "--sandbox", "digest-bench", *shape, "--threads", "4",
            "--time", "5", "--settle", "off", "--ps", "off"], env)
        sh(mysql + ["-e", "SET GLOBAL slow_query_log=0"])
        seed = os.path.join(tmp, "seed.log")
        shutil.copy(log, seed)
        return seed
    finally:
        subprocess.run([QPSLAB, "server", "stop", "--rm", "digest-bench"], env=env, capture_output=True)


def entries(seed):
    text = open(seed, encoding="utf-8", errors="replace").read()
    starts = [m.start() for m in ENTRY_START.finditer(text)]
    out = []
    for a, b in zip(starts, starts[1:] + [len(text)]):
        e = text[a:b]
        if e.startswith("# Time: "):  # only when the second changes; written anew below
            e = e[e.index("\n") + 1:]
        if e.startswith("# User@Host: "):
            out.append(e)
    return out


def vary(entry, rng, thread, ts):
    head, _, body = entry.partition("SET timestamp=")
    body = body[body.index("\n") + 1:]
    head = re.sub(r"Thread_id: \d+", f"Thread_id: {thread}", head)
    head = re.sub(r"Query_time: (\d+\.\d+)", lambda m: f"Query_time: {float(m.group(1)) * rng.uniform(0.5, 2):.6f}", head)
    body = NUMBER.sub(lambda m: str(rng.randrange(1, 10 ** len(m.group(0).split('.')[0]) + 1)), body)
    body = STRING.sub(lambda m: "'" + "".join(rng.choice("abcdefghij-") for _ in range(len(m.group(0)) - 2)) + "'", body)
    return f"{head}SET timestamp={ts};\n{body}"


def grow(seed, path, size):
    rng = random.Random(13)
    base = entries(seed)
    if not base:
        sys.exit(f"no entries in {seed}")
    header = "/usr/sbin/mariadbd, Version: 10.11.19-MariaDB-0+deb12u1 (Debian 12). started with:\n" \
             "Tcp port: 3306  Unix socket: /run/mysqld/mysqld.sock\nTime\t\t    Id Command\tArgument\n"
    ts, written, n = 1795400000, 0, 0
    with open(path, "w") as f:
        f.write(header)
        while written < size:
            for e in base:
                if n % 2000 == 0:
                    ts += 1
                    t = time.strftime("%y%m%d %k:%M:%S", time.gmtime(ts))
                    f.write(f"# Time: {t}\n")
                text = vary(e, rng, 1000 + n // 50, ts)
                f.write(text)
                written += len(text)
                n += 1
    return n, len(base)


def timed(args, tmp):
    """Wall seconds and peak RSS (MiB) of one run. The RSS comes from /usr/bin/time, not from
    our own wait4: a child forked from this Python process inherits its high-water mark."""
    rss_file = os.path.join(tmp, "rss")
    started = time.monotonic()
    with open(os.devnull, "w") as null:
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss_file, *args], stdout=null,
                           stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - started
    if p.returncode != 0:
        sys.exit(f"{args[0]} failed: {p.stderr}")
    return wall, int(open(rss_file).read().split()[-1]) / 1024


def rss_of_four_copies(log, tmp):
    """Peak RSS (MiB) and MB/s of `qpslab digest -` reading the log four times over from a
    pipe: the memory must not grow with the input."""
    rss_file = os.path.join(tmp, "rss4")
    started = time.monotonic()
    cmd = f"cat '{log}' '{log}' '{log}' '{log}' | /usr/bin/time -f %M -o '{rss_file}' '{QPSLAB}' digest - --format json >/dev/null"
    subprocess.run(["sh", "-c", cmd], check=True)
    wall = time.monotonic() - started
    return int(open(rss_file).read().split()[-1]) / 1024, 4 * os.path.getsize(log) / 1e6 / wall


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=float, default=64)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed-log")
    ap.add_argument("--keep-log")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="qpslab-digest-bench-")
    try:
        seed = a.seed_log or capture(tmp)
        log = a.keep_log or os.path.join(tmp, "big-slow.log")
        n, kinds = grow(seed, log, int(a.size_mb * 1e6))
        mb = os.path.getsize(log) / 1e6
        load_before = os.getloadavg()
        runs = {"qpslab": [], "pt": []}
        for _ in range(a.rounds):
            runs["qpslab"].append(timed([QPSLAB, "digest", log, "--format", "json"], tmp))
            runs["pt"].append(timed(["pt-query-digest", "--no-version-check", log], tmp))
        rss4, rate4 = rss_of_four_copies(log, tmp)
        load_after = os.getloadavg()
        med = {k: statistics.median(mb / w for w, _ in v) for k, v in runs.items()}
        rss = {k: max(r for _, r in v) for k, v in runs.items()}
        print(f"{time.strftime('%Y-%m-%d %H:%M')}: nproc {os.cpu_count()}, load average before "
              f"{[round(x, 2) for x in load_before]}, after {[round(x, 2) for x in load_after]}; "
              f"log {mb:.1f} MB, {n} entries grown from {kinds} captured ones; {a.rounds} rounds, interleaved")
        print()
        print("| tool | MB/s (median) | wall s per run | peak RSS MiB |")
        print("|---|---:|---|---:|")
        for k, name in (("qpslab", "qpslab digest --format json"), ("pt", "pt-query-digest")):
            walls = ", ".join(f"{w:.2f}" for w, _ in runs[k])
            print(f"| {name} | {med[k]:.1f} | {walls} | {rss[k]:.1f} |")
        print()
        print(f"ratio of the medians: {med['qpslab'] / med['pt']:.1f}×")
        print(f"the log four times over through a pipe ({4 * mb:.0f} MB): qpslab peak RSS {rss4:.1f} MiB, {rate4:.0f} MB/s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
