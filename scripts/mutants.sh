#!/bin/sh
# Mutation testing of the core's byte-exact parts with cargo-mutants (not in CI: slow).
# Usage: scripts/mutants.sh [SHARD...]; shards: hash bloom_dump cuckoo_dump rdb
# bloom_sizing chain_sizing cuckoo_insert_delete (all by default). One mutant at a time, lowest
# priority, the core's unit tests only (`cargo test --lib -- filter::`), mutating a private
# copy of the tree in place ($MUTANTS_SRC, default /tmp/redbloom-mutants-src: its build
# stays warm from shard to shard); results in $MUTANTS_OUT/<shard>/mutants.out
# (caught.txt, missed.txt, unviable.txt, timeout.txt; default /tmp/redbloom-mutants).
set -eu
command -v cargo-mutants >/dev/null || cargo install cargo-mutants --locked
shards=${*:-hash bloom_dump cuckoo_dump rdb bloom_sizing chain_sizing cuckoo_insert_delete}
out=${MUTANTS_OUT:-/tmp/redbloom-mutants}
src=${MUTANTS_SRC:-/tmp/redbloom-mutants-src}
rm -rf "$src" && mkdir -p "$src"
tar --exclude=./target --exclude=./.git -cf - . | tar -xf - -C "$src"
cd "$src"
for shard in $shards; do
  case $shard in
    hash) set -- --file src/filter/hash.rs ;;
    bloom_dump) set -- --file src/filter/bloom_dump.rs ;;
    cuckoo_dump) set -- --file src/filter/cuckoo_dump.rs ;;
    rdb) set -- --file src/filter/rdb.rs ;;
    bloom_sizing) set -- --file src/filter/bloom.rs -F 'binary_exponent|fields_are_consistent|Modulus' ;;
    chain_sizing) set -- --file src/filter/chain.rs -F 'Chain::(grow|mem_usage|capacity|links_are_consistent)' ;;
    cuckoo_insert_delete) set -- --file src/filter/cuckoo.rs \
      -F 'CuckooFilter::(insert|kick_out|delete|find_available|set_slot|grow)|SubFilter::(find_fp|find_available|bucket)|alt_index' ;;
    *) echo "unknown shard $shard" >&2; exit 2 ;;
  esac
  echo "== $shard"
  mkdir -p "$out/$shard"
  nice -n 19 cargo mutants --in-place --no-shuffle --baseline=skip --timeout 300 \
    --build-timeout 1200 --cargo-test-arg=--lib -o "$out/$shard" "$@" -- filter:: || true
done
