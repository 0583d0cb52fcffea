#!/bin/bash
# TPC-C, qpslab against sysbench-tpcc on one sandbox, interleaved (qpslab, qpslab with
# --pipeline on, sysbench, then again): the load of W warehouses, then a stress run of each
# dataset at T threads. TOOLS="qpslab sysbench" leaves the pipelined arm out.
#
#   git clone https://github.com/Percona-Lab/sysbench-tpcc /tmp/sysbench-tpcc   # their Lua, unchanged
#   cargo build --release -p qpslab && target/release/qpslab server start tpccab
#   SB_TPCC=/tmp/sysbench-tpcc SANDBOX=tpccab bench/tpcc_ab.sh
#
# Prints one line per load (seconds) and per run: the server's New-Order count per minute of the
# command's wall time for both tools (change of sum(d_next_o_id)), qpslab's NewOrder/min,
# transactions/min and client CPU; sysbench-tpcc's transactions and queries; client CPU of both
# from /usr/bin/time.
set -u
Q=${Q:-$(cd "$(dirname "$0")/.." && pwd)/target/release/qpslab}
LAB=${QPSLAB_LAB:-$HOME/.qpslab}
SANDBOX=${SANDBOX:-tpccab}
W=${W:-2} T=${T:-8} TIME=${TIME:-30} ROUNDS=${ROUNDS:-2} TOOLS=${TOOLS:-qpslab qpslab-pipeline sysbench}
cnf=$LAB/sandboxes/$SANDBOX/client.cnf
SOCK=$(awk -F' = ' '/^socket/{print $2}' "$cnf")
# The password goes through a sysbench config file, not the command line (ps shows that).
SBCONF=$(mktemp)
trap 'rm -f "$SBCONF"' EXIT
chmod 600 "$SBCONF"
echo "mysql-password=$(cat "$LAB/sandboxes/$SANDBOX/password")" > "$SBCONF"
M="mariadb --defaults-file=$cnf -N -B -e"
cd "${SB_TPCC:?set SB_TPCC to a checkout of Percona-Lab/sysbench-tpcc}"
SB="sysbench ./tpcc.lua --config-file=$SBCONF --mysql-socket=$SOCK --mysql-user=root --scale=$W --tables=1 --use_fk=0"
for round in $(seq "$ROUNDS"); do
  for tool in $TOOLS; do
    db=ab_${tool//-/_}_$round
    $M "DROP DATABASE IF EXISTS $db; CREATE DATABASE $db"
    t0=$(date +%s.%N)
    if [ $tool != sysbench ]; then
      "$Q" prepare tpcc --warehouses "$W" --sandbox "$SANDBOX" --database $db --threads 2 >/dev/null 2>&1 || echo FAIL
    else
      $SB --mysql-db=$db --threads=2 prepare >/dev/null 2>&1 || echo FAIL
    fi
    echo "load $tool round $round: $(echo "$(date +%s.%N) - $t0" | bc) s"
  done
  for tool in $TOOLS; do
    db=ab_${tool//-/_}_$round
    # The server's own New-Order count, the same for both tools: the change of sum(d_next_o_id)
    # over the whole command (warm-up included), per minute of its wall time.
    district=district; [ $tool = sysbench ] && district=district1
    n0=$($M "SELECT SUM(d_next_o_id) FROM $db.$district"); t0=$(date +%s.%N)
    if [ $tool != sysbench ]; then
      pipeline=off; [ $tool = qpslab-pipeline ] && pipeline=on
      out=$( { /usr/bin/time -f "client_cpu %U %S" "$Q" run tpcc --warehouses "$W" --sandbox "$SANDBOX" \
        --database $db --threads "$T" --time "$TIME" --warmup 5 --settle off --pipeline $pipeline; } 2>&1 )
      summary=$(echo "$out" | grep -E 'NewOrder/min|transactions:|transactions/min|cpu per query|client_cpu' | tr -s ' ' | tr '\n' ';')
    else
      out=$( { /usr/bin/time -f "client_cpu %U %S" $SB --mysql-db=$db --threads="$T" --time=$((TIME + 5)) run; } 2>&1 )
      summary=$(echo "$out" | grep -E 'transactions:|queries:|client_cpu' | tr -s ' ' | tr '\n' ';')
    fi
    n1=$($M "SELECT SUM(d_next_o_id) FROM $db.$district"); t1=$(date +%s.%N)
    server_nopm=$(echo "($n1 - $n0) * 60 / ($t1 - $t0)" | bc)
    echo "run $tool round $round: server NewOrder/min $server_nopm (wall $(echo "$t1 - $t0" | bc) s, $((n1 - n0)) new orders);$summary"
  done
done
