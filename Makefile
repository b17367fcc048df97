# redbloom — build, run and test. `make run` and `make test` are the two set-up commands.
PORT ?= 6379
CARGO ?= cargo
# The directories cargo builds into, as cargo itself reports them (CARGO_TARGET_DIR, a
# .cargo/config.toml build.target-dir, or ./target); each evaluated once, when first used.
target_dir_of = $(shell $(CARGO) metadata --format-version 1 --no-deps $(1) | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
TARGET_DIR = $(eval TARGET_DIR := $(call target_dir_of,))$(TARGET_DIR)
FUZZ_TARGET_DIR = $(eval FUZZ_TARGET_DIR := $(call target_dir_of,--manifest-path fuzz/Cargo.toml))$(FUZZ_TARGET_DIR)
MODULE = $(TARGET_DIR)/release/libredbloom.so

.PHONY: all deps test-deps build run test test-python test-redis test-redis8 test-valkey test-valkey9 test-fuzz test-docker lint fmt bench bench-e2e bench-stall bench-info bench-load docker clean fuzz valgrind sizing-charts merge-chart

all: build

## What building and running needs (libclang, redis-server); `test-deps` adds what only the
## tests need (Node.js, npm, node-redis, redis-py).
deps:
	@scripts/install-deps.sh

test-deps:
	@scripts/install-deps.sh --test

build: deps
	$(CARGO) build --release

## Start the server in the foreground on 127.0.0.1:$(PORT) with the module loaded:
## redis-server by default, Valkey 8.1 with SERVER=valkey, Valkey 9.1 with SERVER=valkey9,
## Redis 8.2 with SERVER=redis8.
run: build
ifeq ($(SERVER),valkey)
	$$(scripts/valkey-server.sh) --port $(PORT) --bind 127.0.0.1 --save "" --loadmodule $(abspath $(MODULE))
else ifeq ($(SERVER),valkey9)
	$$(scripts/valkey9-server.sh) --port $(PORT) --bind 127.0.0.1 --save "" --loadmodule $(abspath $(MODULE))
else ifeq ($(SERVER),redis8)
	$$(scripts/redis8-server.sh) --port $(PORT) --bind 127.0.0.1 --save "" --loadmodule $(abspath $(MODULE))
else
	redis-server --port $(PORT) --bind 127.0.0.1 --save "" --loadmodule $(abspath $(MODULE))
endif

## Everything CI runs: formatting, lints, unit tests, the integration tests against
## Redis 7 (Debian's redis-server), Redis 8.2, Valkey 8.1 and Valkey 9.1, every fuzz target built and
## run over its seeds, and the module built from exactly what docker/Dockerfile copies.
test: test-deps lint test-redis test-redis8 test-valkey test-valkey9 test-fuzz test-docker test-python

## docker/Dockerfile's copy set builds the module and the CLI every image copies, for each
## image of `make docker` (no Docker engine needed; the build is incremental in
## $(TARGET_DIR)/docker-check).
DOCKER_IMAGES = redis7 valkey redis8 valkey9
test-docker: deps
	scripts/docker-check.sh $(TARGET_DIR)/docker-check $(DOCKER_IMAGES)

## The core's unit, property and doc tests, the module's unit tests, the integration
## tests against redis-server. (Benchmarks are
## compiled by `lint`'s clippy --all-targets; they run with `make bench`/`bench-e2e`.)
test-redis: test-deps
	$(CARGO) test --workspace

## The integration tests (one binary, tests/it) against Redis 8.2.3 (installed into .venv
## when missing), reusing the test binary test-redis built, as test-valkey does.
test-redis8: test-deps
	REDBLOOM_SERVER=$$(scripts/redis8-server.sh) $(CARGO) test --workspace --test it

## The integration tests (tests/it, and the CLI's cli/tests/cli) against Valkey 8.1 (installed into .venv
## when missing). `--workspace` resolves dependency features as test-redis does, so the
## test binary built there is reused, not rebuilt.
test-valkey: test-deps
	REDBLOOM_SERVER=$$(scripts/valkey-server.sh) $(CARGO) test --workspace --test it --test cli

## The same against Valkey 9.1 (installed into .venv when missing): the atomic slot
## migration tests (tests/it/migration, cli/tests/cli/migration.rs) run only there.
test-valkey9: test-deps
	REDBLOOM_SERVER=$$(scripts/valkey9-server.sh) $(CARGO) test --workspace --test it --test cli

## Every fuzz target (fuzz/fuzz_targets) compiles and its seed corpus (fuzz/seeds/<target>)
## passes: through the target's function as a plain test, and through the built libFuzzer
## binary, which only executes the given inputs (no fuzzing toolchain needed).
test-fuzz: test-deps
	$(CARGO) test --manifest-path fuzz/Cargo.toml
	$(CARGO) build --manifest-path fuzz/Cargo.toml --bins
	@for t in $(FUZZ_TARGETS); do \
	  $(FUZZ_TARGET_DIR)/debug/$$t fuzz/seeds/$$t/* > $(FUZZ_TARGET_DIR)/seeds-$$t.log 2>&1 \
	    || { cat $(FUZZ_TARGET_DIR)/seeds-$$t.log; echo "fuzz target $$t failed on its seeds"; exit 1; }; \
	  echo "fuzz target $$t: $$(ls fuzz/seeds/$$t | wc -l) seeds pass"; \
	done

## The Python package (python/): its abi3 wheel built by maturin (from PyPI, into .venv) and
## installed there, then its pytest suite against real servers (a single server, a replica,
## a 3-master cluster) on Redis 7 (Debian's), Redis 8.2 and Valkey 8.1, with the module and
## the CLI of the debug build (the CLI reads and writes what Python does).
PYTEST = .venv/bin/python -m pytest -q -p no:cacheprovider python/tests
test-python: test-deps
	$(CARGO) build -p redbloom -p redbloom-cli
	.venv/bin/pip install --quiet --disable-pip-version-check 'maturin>=1.16,<2'
	rm -rf $(TARGET_DIR)/wheels
	.venv/bin/maturin build --quiet --release -m python/Cargo.toml -o $(TARGET_DIR)/wheels
	.venv/bin/pip install --quiet --disable-pip-version-check --force-reinstall --no-deps $(TARGET_DIR)/wheels/redbloom-*.whl
	$(PYTEST)
	REDBLOOM_SERVER=$$(scripts/redis8-server.sh) $(PYTEST)
	REDBLOOM_SERVER=$$(scripts/valkey-server.sh) $(PYTEST)

lint:
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) fmt --manifest-path fuzz/Cargo.toml --check
	$(CARGO) clippy --manifest-path fuzz/Cargo.toml --all-targets -- -D warnings

fmt:
	$(CARGO) fmt --all

## Criterion benchmarks of the core.
bench:
	$(CARGO) bench -p redbloom-core --bench core

## The end-to-end benchmark (results: docs/benchmarks.md) on each of E2E_SERVERS (Redis 7.0.15,
## Redis 8.2.3 and Valkey 8.1.8 by default; `valkey9` adds Valkey 9.1.2), side by side with RedisBloom 2.4.20 from
## REDISBLOOM_SO and, on Redis 8, RedisBloom 8.2.3 from REDISBLOOM8_SO (each skipped with a
## message when unset); REFERENCE_MODULE=/path/to/module.so runs that one module instead.
E2E_SERVERS ?= redis7 redis8 valkey
bench-e2e: build
	@for s in $(E2E_SERVERS); do \
	  case $$s in \
	    redis7) server=redis-server ;; \
	    redis8) server=$$(scripts/redis8-server.sh) || exit 1 ;; \
	    valkey) server=$$(scripts/valkey-server.sh) || exit 1 ;; \
	    valkey9) server=$$(scripts/valkey9-server.sh) || exit 1 ;; \
	    *) echo "unknown server $$s (redis7, redis8, valkey, valkey9)"; exit 1 ;; \
	  esac; \
	  echo "== bench-e2e on $$s ($$server)"; \
	  REDBLOOM_SERVER=$$server $(CARGO) bench --bench e2e || exit 1; \
	done

## How long creating or growing a ~1 GiB filter, a RESTORE of a 255 MiB filter, a digest
## of a 1 GiB one and SF.BUILD FROM a 20,000- and a 10M-member SET hold the main thread,
## and the longest PING stall meanwhile (results:
## docs/benchmarks.md). REFERENCE_MODULE=/path/to/redisbloom.so measures RedisBloom side by
## side, in interleaved rounds; STALL_ONLY=RESTORE (a substring of a workload's name) runs one.
bench-stall: build
	$(CARGO) bench --bench stall

## INFO bf with 1M filter keys against 1 (the health counts are kept, never scanned);
## INFO_KEYS tunes the count.
bench-info: build
	$(CARGO) bench --bench info_health

## `redbloom load` against pipelined BF.MADD (10M items), and a 12-member sharded filter on
## a 3-master cluster against one key (docs/benchmarks.md); LOAD_ITEMS, SHARD_ITEMS,
## BENCH_ROUNDS tune it.
bench-load: build
	$(CARGO) bench -p redbloom-cli --bench load

## Fuzzing (not in CI): every target of fuzz/ for FUZZ_SECONDS each, one job, the address
## sanitizer (FUZZ_SANITIZER=none without it). cargo-fuzz needs nightly flags:
## RUSTC_BOOTSTRAP=1 lets the stable toolchain accept them. Crashes land in fuzz/artifacts.
FUZZ_SECONDS ?= 60
FUZZ_SANITIZER ?= address
FUZZ_TARGETS ?= $(sort $(basename $(notdir $(wildcard fuzz/fuzz_targets/*.rs))))
fuzz:
	@command -v cargo-fuzz >/dev/null || $(CARGO) install cargo-fuzz --locked
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p fuzz/corpus/$$t || exit 1; \
	  echo "== $$t ($(FUZZ_SECONDS) s)"; \
	  RUSTC_BOOTSTRAP=1 $(CARGO) fuzz run -s $(FUZZ_SANITIZER) $$t fuzz/corpus/$$t fuzz/seeds/$$t -- \
	    -max_total_time=$(FUZZ_SECONDS) -max_len=1024 -rss_limit_mb=2048 -print_final_stats=1 || exit 1; \
	done

## The integration tests with every server under valgrind memcheck (not in CI; slow):
## VALGRIND_TESTS picks the tests by name filters of the one binary, tests/it (module paths;
## filters are substrings, so `bf::persistence::` also matches `cbf::` and `wbf::` names
## unless skipped). Each server's report goes to target/valgrind/;
## scripts/valgrind-report.sh fails on any error or leak with a frame of the module. (No
## --error-exitcode: it would fail every forked BGSAVE / AOF-rewrite child; the logs decide.)
VALGRIND_TESTS ?= hostile_input:: durability:: bf::persistence:: bf::dump:: --skip cbf:: --skip wbf::
VALGRIND_LOGS ?= $(abspath $(TARGET_DIR))/valgrind
valgrind: test-deps
	rm -rf $(VALGRIND_LOGS) && mkdir -p $(VALGRIND_LOGS)
	REDBLOOM_SERVER_WRAPPER="valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite,indirect \
	  --suppressions=$(CURDIR)/scripts/valgrind.sup --log-file=$(VALGRIND_LOGS)/vg-%p.log" \
	  $(CARGO) test --test it -- --test-threads=2 $(VALGRIND_TESTS) || true
	scripts/valgrind-report.sh $(VALGRIND_LOGS)

## The measurements and charts of docs/sizing.md (docs/sizing/*.csv, *.svg; not in CI).
sizing-charts: build
	@[ -x .venv/bin/python ] || python3 -m venv .venv
	.venv/bin/pip install -q redis matplotlib
	REDBLOOM_MODULE=$(abspath $(MODULE)) .venv/bin/python scripts/sizing-charts.py

## The false-positive cost of merging k filters, docs/choosing.md's chart (docs/sizing/merge-fp.*).
merge-chart: build
	@[ -x .venv/bin/python ] || python3 -m venv .venv
	.venv/bin/pip install -q redis matplotlib
	REDBLOOM_MODULE=$(abspath $(MODULE)) .venv/bin/python scripts/merge-chart.py

## An image with the module and the `redbloom` CLI: Debian's Redis 7.0 (`redbloom`),
## SERVER=valkey Valkey 8.1 (`redbloom:valkey`), SERVER=redis8 Redis 8.2 (`redbloom:redis8`),
## SERVER=valkey9 Valkey 9.1 (`redbloom:valkey9`).
docker:
ifeq ($(filter $(or $(SERVER),redis7),$(DOCKER_IMAGES)),)
	$(error SERVER=$(SERVER): one of $(DOCKER_IMAGES))
endif
	docker build -f docker/Dockerfile --target $(or $(SERVER),redis7) -t redbloom$(if $(filter-out redis7,$(or $(SERVER),redis7)),:$(SERVER)) .

clean:
	$(CARGO) clean
