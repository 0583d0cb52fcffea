#!/bin/bash
# Regenerates the screenshots in docs/reports.md: runs the studies (examples/NAME.toml, else
# bench/NAME.toml) on a scratch lab
# (sandboxed MariaDB servers, nothing outside $WORK is touched), writes each study's HTML
# report and screenshots its top in headless Chromium at 1400 px, as a reader opens it.
#
#   cargo build -p qpslab && docs/report_screenshots.sh
#   EXAMPLES="baseline-vs-tuned" HEIGHT=3000 docs/report_screenshots.sh
#   RESULTS_DB=/path/results.db EXAMPLES="baseline-vs-tuned" docs/report_screenshots.sh
#
# With RESULTS_DB the studies are not run: each report is drawn from the studies already stored
# there (the runs bench/RESULTS.md describes), under the study's name.
#
# Writes docs/report-<example>.png (the top) and docs/report-<example>-charts.png (the charts after
# the context); the HTML reports stay in $KEEP when it is set. The pictures
# show what a report looks like, not figures to act on: each phase is measured once
# (retries = 0, RETRIES to change it) and a study in rounds stops after 3 minutes (BUDGET), so
# a busy machine does not stretch the run.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
Q=${Q:-$ROOT/target/debug/qpslab}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export QPSLAB_LAB=$WORK/lab QPSLAB_DB=${RESULTS_DB:-$WORK/results.db}
for name in ${EXAMPLES:-baseline-vs-tuned study-drift-bp8m}; do
  if [ -z "${RESULTS_DB:-}" ]; then
    spec=$ROOT/examples/$name.toml
    [ -f "$spec" ] || spec=$ROOT/bench/$name.toml
    sed -e "s/^\[defaults\]\$/[defaults]\nretries = ${RETRIES:-0}/" \
      -e "s/^budget = .*/budget = \"${BUDGET:-3m}\"/" "$spec" >"$WORK/$name.toml"
    "$Q" lab run "$WORK/$name.toml" >"$WORK/$name.log" 2>&1 \
      || { tail -20 "$WORK/$name.log"; exit 1; }
  fi
  "$Q" report "$name" --out "$WORK/$name.html"
  timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --user-data-dir="$WORK/chromium" --window-size=1400,"${HEIGHT:-2400}" \
    --screenshot="$ROOT/docs/report-$name.png" "file://$WORK/$name.html" 2>/dev/null
  # The charts below the summary and context: the same page from its first chart section on.
  python3 - "$WORK/$name.html" "$WORK/$name-charts.html" <<'PY'
import sys
page = open(sys.argv[1]).read()
cut = min(page.find(s) for s in ('<h2 id="scaling"', '<h2 id="intervals"') if s in page)
open(sys.argv[2], "w").write(page[: page.index("<h1>")] + page[cut:])
PY
  timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --user-data-dir="$WORK/chromium" --window-size=1400,"${HEIGHT:-2400}" \
    --screenshot="$ROOT/docs/report-$name-charts.png" "file://$WORK/$name-charts.html" 2>/dev/null
  if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP" && cp "$WORK/$name.html" "$KEEP/"; fi
  echo "docs/report-$name.png docs/report-$name-charts.png"
done
