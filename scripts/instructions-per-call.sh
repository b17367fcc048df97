#!/usr/bin/env bash
# Instructions the server executes per command (callgrind): deterministic, so it compares two
# modules on a busy machine where wall-clock and CPU time do not.
#
#   scripts/instructions-per-call.sh SERVER MODULE SETUP COMMAND [N]
#
# Starts SERVER (redis-server or valkey-server, no --enable-debug-command unless EXTRA_ARGS
# says so) under callgrind with MODULE loaded, runs SETUP (one redis-cli command line per
# `;`), then counts instructions only while `redis-cli --pipe` sends COMMAND N times (default
# 20000; one connection), and prints `instructions_per_call` (the
# server's work but its timer events) and `module_command` (inside the module's command). The callgrind
# file stays in $OUT (default /tmp/ipc.<port>.out) for `callgrind_annotate --inclusive=yes`.
# `__rand_int__` in COMMAND is a random number below 1000000, 12 digits (as redis-benchmark
# -r writes it), the same sequence in every run (SEED, default 1); `__rand_skew__` is a
# skewed one (x mod (1 + y), x below 2^32 and y below 10000: small numbers far more often,
# as the end-to-end benchmark's Top-K items, so a Top-K keeps heavy hitters that come
# back); WARM (default COMMAND) is
# the command of the 500 calls sent before counting.
# PORT (default 17300 + a random offset) and EXTRA_ARGS (extra server arguments) tune it.
set -euo pipefail
server=$1 module=$2 setup=$3 command=$4 n=${5:-20000}
port=${PORT:-$((17300 + RANDOM % 500))}
out=${OUT:-/tmp/ipc.$port.out}
rm -f "$out"
# shellcheck disable=SC2086
valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$out" \
  "$server" --port "$port" --bind 127.0.0.1 --save "" --appendonly no --hz 1 \
  --loadmodule "$module" ${EXTRA_ARGS:-} >"$out.log" 2>&1 &
vg=$!
trap 'redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true; wait $vg 2>/dev/null || true' EXIT
for _ in $(seq 1 300); do
  redis-cli -p "$port" ping >/dev/null 2>&1 && break
  sleep 0.2
done
IFS=';' read -ra lines <<<"$setup"
for line in "${lines[@]}"; do
  # shellcheck disable=SC2086
  [ -n "${line// /}" ] && redis-cli -p "$port" $line >/dev/null
done
# COUNT copies of COMMAND in RESP, each `__rand_int__` replaced as redis-benchmark -r does
# (12 digits, zero-padded, below 1000000) but from awk's generator seeded with SEED: both
# modules of a comparison get the same commands (redis-benchmark seeds from the clock,
# and a Top-K's path — decays, expulsions — follows its items).
commands() { # COUNT SEED COMMAND
  awk -v n="$1" -v seed="$2" -v cmd="$3" 'BEGIN {
    srand(seed); argc = split(cmd, args, " ")
    for (c = 0; c < n; c++) {
      printf "*%d\r\n", argc
      for (a = 1; a <= argc; a++) {
        arg = args[a]
        while ((at = index(arg, "__rand_int__")) > 0)
          arg = substr(arg, 1, at - 1) sprintf("%012d", int(rand() * 1000000)) substr(arg, at + 12)
        while ((at = index(arg, "__rand_skew__")) > 0) {
          skew = int(rand() * 4294967296) % (1 + int(rand() * 10000))
          arg = substr(arg, 1, at - 1) skew substr(arg, at + 13)
        }
        printf "$%d\r\n%s\r\n", length(arg), arg
      }
    }
  }'
}
work=$(mktemp -d)
commands 500 "$((${SEED:-1} + 1))" "${WARM:-$command}" >"$work/warm"
commands "$n" "${SEED:-1}" "$command" >"$work/run"
# Warm up (first-call allocations, lazy bindings), then count.
redis-cli -p "$port" --pipe <"$work/warm" >/dev/null
callgrind_control -i on "$vg" >/dev/null
redis-cli -p "$port" --pipe <"$work/run" >/dev/null
callgrind_control -i off "$vg" >/dev/null
rm -rf "$work"
redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
wait $vg 2>/dev/null || true
trap - EXIT
# The timer events (serverCron: memory statistics every 100 ms of wall-clock) cost per call
# what the run's duration makes them, not what the command does: the server runs with
# --hz 1, and where it has symbols (Redis 8.2.3's build; not Debian's stripped 7.0.15,
# whose figures then keep that cron share and show no module_command) they are left out.
inclusive() {
  callgrind_annotate --inclusive=yes --threshold=100 "$out" 2>/dev/null |
    awk -v f="$1" 'index($0, f) && !done {gsub(",", "", $1); print $1; done = 1}'
}
total=$(awk '/^totals:/ {print $2}' "$out")
timers=$(inclusive "ae.c:processTimeEvents")
dispatch=$(inclusive "module.c:RedisModuleCommandDispatcher")
echo "instructions_per_call $(((total - ${timers:-0}) / n)) module_command $((${dispatch:-0} / n))"
