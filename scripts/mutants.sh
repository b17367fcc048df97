#!/bin/sh
# Mutation testing of the core's byte-exact parts with cargo-mutants (not in CI: slow).
# Usage: scripts/mutants.sh [SHARD...] or scripts/mutants.sh planted [NAME...]; shards: hash cuckoo_dump bloom_dump rdb
# cuckoo_insert_delete chain_sizing bloom_sizing (all by default, in this order). One mutant at a time, lowest
# priority, the core's unit tests that can see the shard's code (`cargo test -p redbloom-core
# --lib -- <modules>`), mutating a private copy of the tree in place ($MUTANTS_SRC, default
# /tmp/redbloom-mutants-src: its build stays warm from shard to shard and run to run);
# results in $MUTANTS_OUT/<shard>/mutants.out (caught.txt, missed.txt, unviable.txt,
# timeout.txt; default /tmp/redbloom-mutants). A mutant whose tests run past 20 s (a hash
# that makes every item collide, say; the suites take 1–20 s) counts as timed out; a rerun
# (--iterate) skips the mutants already caught. MUTANTS_SHARD=k/n tests every n-th mutant
# of each shard only (round robin from k), a sample when there is no time for all.
#
# `scripts/mutants.sh planted [NAME...]` runs the planted mutants instead: bugs an audit
# planted by hand that cargo-mutants does not generate (issue 37), each one literal edit
# and the tests that must fail on it (all cases by default; names below). Each is planted
# in the private copy, its tests built and run (`cargo test` as given, so
# CARGO_TARGET_DIR is honoured), the file restored; a mutant is caught when a test fails
# (the same tests having passed unmutated first),
# missed when all pass, unviable when it does not build. Results in
# $MUTANTS_OUT/planted/{caught,missed,unviable}.txt.
set -eu
root=$(pwd)
out=${MUTANTS_OUT:-/tmp/redbloom-mutants}
src=${MUTANTS_SRC:-/tmp/redbloom-mutants-src}
mkdir -p "$src"
# Fresh sources (a run stopped mid-mutant leaves its file mutated), the old build kept.
tar --exclude=./target --exclude=./fuzz/target --exclude=./.git --exclude=./.venv -cf - . | tar -xf - -C "$src"
cd "$src"

# The planted mutants: $file, the text $from (found exactly once) replaced by $to, and
# $tests, `cargo test` argument lists separated by `|`.
planted_case() {
  case $1 in
    topk_decay_count_plus_one) file=core/src/topk/mod.rs
      from='self.draw() < self.decay_chance(count)'
      to='self.draw() < self.decay_chance(count + 1)'
      tests='-p redbloom-core --lib topk::decay_tests|--test it topk::known_answers' ;;
    topk_generator_one_step_ahead) file=core/src/topk/mod.rs
      from='(splitmix64(&mut self.rng) >> 11)'
      to='({ splitmix64(&mut self.rng); splitmix64(&mut self.rng) } >> 11)'
      tests='-p redbloom-core --lib topk::decay_tests|--test it topk::known_answers' ;;
    topk_generator_starts_one_step_ahead) file=core/src/topk/mod.rs
      from='            (heap, fps),
            0,
'
      to='            (heap, fps),
            0x9e37_79b9_7f4a_7c15,
'
      tests='-p redbloom-core --lib topk::decay_tests|--test it topk::known_answers' ;;
    tdigest_cdf_last_centroid) file=core/src/tdigest/query.rs
      from='(self.max - val) / width * (right_weight / 2.0 - 1.0)'
      to='(self.max - val) / width * (right_weight / 2.0)'
      tests='--test it tdigest::loaded_edges' ;;
    tdigest_cdf_first_centroid) file=core/src/tdigest/query.rs
      from='(val - self.min) / width * (left_weight / 2.0 - 1.0)'
      to='(val - self.min) / width * (left_weight / 2.0)'
      tests='--test it tdigest::loaded_edges' ;;
    tdigest_quantile_first_centroid) file=core/src/tdigest/query.rs
      from='(index - 1.0) / (left_weight / 2.0 - 1.0)'
      to='(index - 1.0) / (left_weight / 2.0)'
      tests='--test it tdigest::loaded_edges' ;;
    tdigest_quantile_last_centroid) file=core/src/tdigest/query.rs
      from='(merged_weight - index - 1.0) / (right_weight / 2.0 - 1.0)'
      to='(merged_weight - index - 1.0) / (right_weight / 2.0)'
      tests='--test it tdigest::loaded_edges' ;;
    cms_insufficient_memory_text) file=src/errors.rs
      from='"CMS: Insufficient memory to create the key"'
      to='"CMS: Insufficient memory to create the kay"'
      tests='--test it -- errors:: cms::hostile' ;;
    shard_routing_seed) file=client/src/shard.rs
      from='xxhash_rust::xxh3::xxh3_64(item)'
      to='xxhash_rust::xxh3::xxh3_64_with_seed(item, 1)'
      tests='-p redbloom-cli --test cli shard_routing' ;;
    snapshot_unknown_family_as_bf) file=client/src/snapshot.rs
      from='let family = Family::parse(kind).map_err(|_| {'
      to='let family = Family::parse(kind).or_else(|_| Family::parse("bf")).map_err(|_| {'
      tests='-p redbloom-client --lib snapshot' ;;
    *) echo "unknown planted mutant $1" >&2; exit 2 ;;
  esac
}
PLANTED="topk_decay_count_plus_one topk_generator_one_step_ahead
  topk_generator_starts_one_step_ahead tdigest_cdf_last_centroid
  tdigest_cdf_first_centroid tdigest_quantile_first_centroid tdigest_quantile_last_centroid
  cms_insufficient_memory_text shard_routing_seed snapshot_unknown_family_as_bf"

# Runs every `|`-separated argument list of $tests; fails when one fails.
run_tests() {
  mode=$1
  old_ifs=$IFS; IFS='|'; set -f
  for args in $tests; do
    IFS=$old_ifs
    # shellcheck disable=SC2086 # $args: one cargo test argument list
    if [ "$mode" = build ]; then
      nice -n 19 cargo test --no-run $args >/dev/null 2>&1 || { set +f; return 1; }
    else
      nice -n 19 cargo test $args >/dev/null 2>&1 || { set +f; return 1; }
    fi
    IFS='|'
  done
  IFS=$old_ifs; set +f
}

if [ "${1:-}" = planted ]; then
  shift
  mkdir -p "$out/planted"
  : >"$out/planted/caught.txt"; : >"$out/planted/missed.txt"; : >"$out/planted/unviable.txt"
  # Baseline: unmutated, every case's tests pass (else a failure proves nothing). The
  # files are touched first: the copy keeps the tree's modification times, older than a
  # build of a mutant an earlier run made, which cargo would take as up to date.
  for name in ${*:-$PLANTED}; do
    planted_case "$name"
    touch "$file"
  done
  for name in ${*:-$PLANTED}; do
    planted_case "$name"
    run_tests run || { echo "$name: its tests fail without the mutant" >&2; exit 4; }
  done
  for name in ${*:-$PLANTED}; do
    planted_case "$name"
    FROM=$from TO=$to perl -0777 -i -pe \
      '$n += s/\Q$ENV{FROM}\E/$ENV{TO}/g; END { exit($n == 1 ? 0 : 3) }' "$file" ||
      { echo "$name: the text to mutate is not once in $file" >&2; cp "$root/$file" "$file"; exit 3; }
    if ! run_tests build; then verdict=unviable
    elif run_tests run; then verdict=missed
    else verdict=caught; fi
    cp "$root/$file" "$file"
    echo "$name: $verdict"
    echo "$name" >>"$out/planted/$verdict.txt"
  done
  exit 0
fi

command -v cargo-mutants >/dev/null || cargo install cargo-mutants --locked
shards=${*:-hash cuckoo_dump bloom_dump rdb cuckoo_insert_delete chain_sizing bloom_sizing}
for shard in $shards; do
  case $shard in
    hash) tests=""; set -- --file core/src/hash.rs ;;
    bloom_dump) tests="bloom::dump counting::dump bloom::rdb"
      set -- --file core/src/bloom/dump.rs ;;
    cuckoo_dump) tests="cuckoo::dump"; set -- --file core/src/cuckoo/dump.rs ;;
    rdb) tests="rdb counting:: window::"; set -- --file core/src/bloom/rdb.rs \
      --file core/src/cuckoo/rdb.rs --file core/src/counting/rdb.rs --file core/src/window/rdb.rs ;;
    bloom_sizing) tests="bloom::link bloom::chain counting::"
      set -- --file core/src/bloom/shape.rs --file core/src/bloom/link.rs \
        -F 'binary_exponent|fields_are_consistent|Modulus' ;;
    chain_sizing) tests="bloom::chain bloom::dump bloom::rdb"
      set -- --file core/src/bloom/chain.rs -F 'Chain::(grow|mem_usage|capacity|links_are_consistent)' ;;
    cuckoo_insert_delete) tests="cuckoo::"; set -- --file core/src/cuckoo/insert.rs \
      --file core/src/cuckoo/filter.rs --file core/src/cuckoo/sub_filter.rs --file core/src/cuckoo/mod.rs \
      -F 'CuckooFilter::(insert|kick_out|delete|find_available|set_slot|grow)|SubFilter::(find_fp|find_available|bucket)|alt_index' ;;
    *) echo "unknown shard $shard" >&2; exit 2 ;;
  esac
  echo "== $shard"
  mkdir -p "$out/$shard"
  if [ -n "${MUTANTS_SHARD:-}" ]; then set -- "$@" --shard "$MUTANTS_SHARD" --sharding round-robin; fi
  # shellcheck disable=SC2086 # $tests: several test-name filters
  nice -n 19 cargo mutants --in-place --no-shuffle --baseline=skip --timeout 20 --iterate \
    --build-timeout 1200 --package redbloom-core --cargo-test-arg=--lib -o "$out/$shard" "$@" -- $tests || true
done
