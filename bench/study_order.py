#!/usr/bin/env python3
"""Cell order in a study round: each point's setups back to back ("points") against each
setup's points in one block ("setups"), interleaved in one run (issue 35).

Two sandboxes stay up (stock, and the tuned settings of examples/baseline-vs-tuned.toml); each
round runs the example's three workloads on both, once in each order (which order goes first
alternates). A comparison pairs the two setups of one workload in one round; the figure is the
spread over rounds of ln(tuned/stock), which is what a study's interval width grows with.

    python3 bench/study_order.py ROUNDS    # qpslab from target/release, lab in a temp dir
"""
import json, math, os, statistics, subprocess, sys, tempfile, time

Q = os.environ.get("QPSLAB", os.path.join(os.path.dirname(__file__), "..", "target", "release", "qpslab"))
LAB = tempfile.mkdtemp(prefix="qpslab-order-")
WORKLOADS = ["oltp_read_only", "oltp_read_write", "oltp_write_only"]
TUNED = ["innodb_buffer_pool_size=256M", "innodb_flush_log_at_trx_commit=2",
         "innodb_log_file_size=256M", "sync_binlog=0", "performance_schema=OFF"]


def qpslab(*args):
    return subprocess.run([Q, *args, "--lab", LAB], capture_output=True, text=True, check=True)


def cell(sandbox, workload):
    out = qpslab("run", workload, "--sandbox", sandbox, "--threads", "8", "--time", "3",
                 "--warmup", "1", "--tables", "4", "--table-size", "10000",
                 "--format", "json", "-q", "--no-defaults")
    return json.loads(out.stdout)["phases"][0]["tps"]


def one_round(order, sides):
    v = {}
    if order == "setups":
        for s in sides:
            for w in WORKLOADS:
                v[(s, w)] = cell(s, w)
    else:
        for i, w in enumerate(WORKLOADS):
            for s in (sides if i % 2 == 0 else sides[::-1]):
                v[(s, w)] = cell(s, w)
    return {w: math.log(v[("tuned", w)] / v[("stock", w)]) for w in WORKLOADS}


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    qpslab("server", "start", "stock", "-q")
    qpslab("server", "start", "tuned", "-q", *[a for s in TUNED for a in ("--set", s)])
    try:
        logs = {o: {w: [] for w in WORKLOADS} for o in ("points", "setups")}
        started = time.time()
        for r in range(rounds):
            orders = ("points", "setups") if r % 2 == 0 else ("setups", "points")
            sides = ["stock", "tuned"] if r % 2 == 0 else ["tuned", "stock"]
            for o in orders:
                for w, x in one_round(o, sides).items():
                    logs[o][w].append(x)
        print(f"{rounds} rounds of each order, interleaved, in {time.time() - started:.0f} s; "
              f"nproc {os.cpu_count()}, load average at the end {os.getloadavg()[0]:.2f}")
        print("order   workload          mean ln(tuned/stock)  sd over rounds")
        for o in ("points", "setups"):
            for w in WORKLOADS:
                xs = logs[o][w]
                print(f"{o:7} {w:17} {statistics.mean(xs):+20.3f}  {statistics.stdev(xs):14.3f}")
        print(json.dumps(logs))
    finally:
        for s in ("stock", "tuned"):
            subprocess.run([Q, "server", "stop", s, "--lab", LAB, "-q"], capture_output=True)


if __name__ == "__main__":
    main()
