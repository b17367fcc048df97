#!/bin/sh
# Mutation testing of the core's byte-exact parts with cargo-mutants (not in CI: slow).
# Usage: scripts/mutants.sh [SHARD...]; shards: hash cuckoo_dump bloom_dump rdb
# cuckoo_insert_delete chain_sizing bloom_sizing (all by default, in this order). One mutant at a time, lowest
# priority, the core's unit tests that can see the shard's code (`cargo test -p redbloom-core
# --lib -- <modules>`), mutating a private copy of the tree in place ($MUTANTS_SRC, default
# /tmp/redbloom-mutants-src: its build stays warm from shard to shard and run to run);
# results in $MUTANTS_OUT/<shard>/mutants.out (caught.txt, missed.txt, unviable.txt,
# timeout.txt; default /tmp/redbloom-mutants). A mutant whose tests run past 20 s (a hash
# that makes every item collide, say; the suites take 1–20 s) counts as timed out; a rerun
# (--iterate) skips the mutants already caught. MUTANTS_SHARD=k/n tests every n-th mutant
# of each shard only (round robin from k), a sample when there is no time for all.
set -eu
command -v cargo-mutants >/dev/null || cargo install cargo-mutants --locked
shards=${*:-hash cuckoo_dump bloom_dump rdb cuckoo_insert_delete chain_sizing bloom_sizing}
out=${MUTANTS_OUT:-/tmp/redbloom-mutants}
src=${MUTANTS_SRC:-/tmp/redbloom-mutants-src}
mkdir -p "$src"
# Fresh sources (a run stopped mid-mutant leaves its file mutated), the old build kept.
tar --exclude=./target --exclude=./fuzz/target --exclude=./.git -cf - . | tar -xf - -C "$src"
cd "$src"
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
