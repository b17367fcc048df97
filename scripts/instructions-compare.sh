#!/usr/bin/env bash
# redbloom against a reference module (RedisBloom) on one server, in instructions per call
# (callgrind, scripts/instructions-per-call.sh): the server's work per command, and the
# part inside the module's command. Deterministic, so it holds on a loaded machine.
#
#   scripts/instructions-compare.sh SERVER REDBLOOM_SO REFERENCE_SO [FILTER]
#
# Prints a markdown table; FILTER (a substring of workload names, e.g. TOPK) picks some.
# N (default 20000) commands per single-item workload, a tenth of that for batches of 100;
# ROUNDS (below) repeats each measurement.
set -euo pipefail
cd "$(dirname "$0")/.."
server=$1 ours=$2 reference=$3 filter=${4:-}
n=${N:-20000}
nb=$((n / 10))
items100=$(for i in $(seq 1 100); do printf 'i%s:__rand_int__ ' "$i"; done)
skewed100=$(for _ in $(seq 1 100); do printf 'i:__rand_skew__ '; done)
values100=$(for i in $(seq 1 100); do printf '%s.__rand_int__ ' "$i"; done)
# name | setup (redis-cli lines split by ;) | warm-up command (empty: the command) | command | count
workloads=(
  "PING||PING|PING|$n"
  "GETBIT|SETBIT bits 1000000 0||GETBIT bits 12345|$n"
  "BF.ADD|BF.RESERVE b 0.01 1000000||BF.ADD b i:__rand_int__|$n"
  "BF.EXISTS|BF.RESERVE b 0.01 1000000|BF.ADD b i:__rand_int__|BF.EXISTS b i:__rand_int__|$n"
  "CMS.INCRBY|CMS.INITBYDIM c 2000 5||CMS.INCRBY c i:__rand_int__ 1|$n"
  "CMS.QUERY|CMS.INITBYDIM c 2000 5|CMS.INCRBY c i:__rand_int__ 1|CMS.QUERY c i:__rand_int__|$n"
  "TOPK.ADD|TOPK.RESERVE t 100 2000 7 0.925||TOPK.ADD t i:__rand_int__|$n"
  "TOPK.QUERY|TOPK.RESERVE t 100 2000 7 0.925|TOPK.ADD t i:__rand_int__|TOPK.QUERY t i:__rand_int__|$n"
  "TOPK.ADD×100|TOPK.RESERVE t 100 2000 7 0.925||TOPK.ADD t $items100|$nb"
  "TOPK.ADD skewed|TOPK.RESERVE t 100 2000 7 0.925||TOPK.ADD t i:__rand_skew__|$n"
  "TOPK.ADD×100 skewed|TOPK.RESERVE t 100 2000 7 0.925||TOPK.ADD t $skewed100|$nb"
  "TDIGEST.ADD|TDIGEST.CREATE d||TDIGEST.ADD d __rand_int__|$n"
  "TDIGEST.ADD×100|TDIGEST.CREATE d||TDIGEST.ADD d $values100|$nb"
  "TDIGEST.QUANTILE|TDIGEST.CREATE d|TDIGEST.ADD d __rand_int__|TDIGEST.QUANTILE d 0.5|$n"
  "TOPK.INCRBY|TOPK.RESERVE t 100 2000 7 0.925||TOPK.INCRBY t i:__rand_int__ 3|$n"
  "TOPK.COUNT|TOPK.RESERVE t 100 2000 7 0.925|TOPK.ADD t i:__rand_int__|TOPK.COUNT t i:__rand_int__|$n"
  "TDIGEST.CDF|TDIGEST.CREATE d|TDIGEST.ADD d __rand_int__|TDIGEST.CDF d __rand_int__|$n"
  "TDIGEST.RANK|TDIGEST.CREATE d|TDIGEST.ADD d __rand_int__|TDIGEST.RANK d __rand_int__|$n"
  "TDIGEST.BYRANK|TDIGEST.CREATE d|TDIGEST.ADD d __rand_int__|TDIGEST.BYRANK d 250|$n"
  "TDIGEST.TRIMMED_MEAN|TDIGEST.CREATE d|TDIGEST.ADD d __rand_int__|TDIGEST.TRIMMED_MEAN d 0.1 0.9|$n"
  "TDIGEST.MIN|TDIGEST.CREATE d|TDIGEST.ADD d __rand_int__|TDIGEST.MIN d|$n"
  "TDIGEST.MAX|TDIGEST.CREATE d|TDIGEST.ADD d __rand_int__|TDIGEST.MAX d|$n"
  "TDIGEST.REVRANK|TDIGEST.CREATE d|TDIGEST.ADD d __rand_int__|TDIGEST.REVRANK d __rand_int__|$n"
  "TDIGEST.BYREVRANK|TDIGEST.CREATE d|TDIGEST.ADD d __rand_int__|TDIGEST.BYREVRANK d 250|$n"
  "TDIGEST.INFO|TDIGEST.CREATE d|TDIGEST.ADD d __rand_int__|TDIGEST.INFO d|$n"
  "CMS.INFO|CMS.INITBYDIM c 2000 5|CMS.INCRBY c i:__rand_int__ 1|CMS.INFO c|$n"
  "TOPK.LIST|TOPK.RESERVE t 10 2000 7 0.925|TOPK.ADD t i:__rand_int__|TOPK.LIST t|$n"
  "TOPK.INFO|TOPK.RESERVE t 100 2000 7 0.925|TOPK.ADD t i:__rand_int__|TOPK.INFO t|$n"
)
# ROUNDS (default 1) servers per module and workload, the median of each column kept: the
# server's hash seeds are random at start (Valkey's command table, the keyspace), which
# moves a command's figure by up to ~40 instructions from one server to the next.
rounds=${ROUNDS:-1}
measure() {
  for _ in $(seq 1 "$rounds"); do
    WARM=$3 scripts/instructions-per-call.sh "$server" "$1" "$2" "$4" "$5" 2>/dev/null |
      awk '/instructions_per_call/ {print $2, $4}'
  done >"$work/rounds"
  middle() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
  echo "$(cut -d' ' -f1 "$work/rounds" | middle) $(cut -d' ' -f2 "$work/rounds" | middle)"
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "server: $("$server" --version | cut -d' ' -f1-3)"
echo
echo "| workload | redbloom instr/call | reference instr/call | ratio | redbloom in module | reference in module |"
echo "|---|---:|---:|---:|---:|---:|"
for w in "${workloads[@]}"; do
  IFS='|' read -r name setup warm command count <<<"$w"
  [ -n "$filter" ] && [[ "$name" != *"$filter"* ]] && continue
  read -r a am <<<"$(measure "$ours" "$setup" "$warm" "$command" "$count")"
  read -r b bm <<<"$(measure "$reference" "$setup" "$warm" "$command" "$count")"
  ratio=$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.3f", a / b}')
  echo "| $name | $a | $b | $ratio | $am | $bm |"
done
