#!/usr/bin/env python3
"""Apache Otava's own change point detection on series read from stdin.

One series a line, values separated by spaces; one line out per series, the indexes of the
change points found (the first point after each change), separated by spaces.

  otava_peer.py edivisive PVALUE SEED   Otava's compute_change_points_orig: E-divisive means
                                        with its permutation test (Matteson and James 2014)
  otava_peer.py ttest PVALUE WINDOW     Otava's default, compute_change_points: E-divisive
                                        candidates in sliding windows, kept by Student's t-test
                                        (Fleming et al. 2023), as `otava analyze` runs it

Used by crates/stats/tests/otava_peer.rs and bench/changepoint_false_alarms.py.
"""

import sys

from otava.analysis import compute_change_points, compute_change_points_orig


def main():
    method, pvalue = sys.argv[1], float(sys.argv[2])
    for line in sys.stdin:
        series = [float(v) for v in line.split()]
        if method == "edivisive":
            points, _ = compute_change_points_orig(series, max_pvalue=pvalue, seed=int(sys.argv[3]))
        elif method == "ttest":
            points, _ = compute_change_points(series, window_len=int(sys.argv[3]), max_pvalue=pvalue)
        else:
            sys.exit(f"unknown method {method!r}: edivisive or ttest")
        print(" ".join(str(p.index) for p in sorted(points, key=lambda p: p.index)), flush=True)


if __name__ == "__main__":
    main()
