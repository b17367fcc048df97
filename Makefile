# redbloom — build, run and test. `make run` and `make test` are the two set-up commands.
PORT ?= 6379
CARGO ?= cargo
MODULE := target/release/libredbloom.so

.PHONY: all deps build run test test-redis test-valkey lint fmt bench bench-e2e docker clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	$(CARGO) build --release

## Start the server in the foreground on 127.0.0.1:$(PORT) with the module loaded:
## redis-server by default, Valkey 8.1 with SERVER=valkey.
run: build
ifeq ($(SERVER),valkey)
	$$(scripts/valkey-server.sh) --port $(PORT) --bind 127.0.0.1 --save "" --loadmodule $(CURDIR)/$(MODULE)
else
	redis-server --port $(PORT) --bind 127.0.0.1 --save "" --loadmodule $(CURDIR)/$(MODULE)
endif

## Everything CI runs: formatting, lints, unit tests, and the integration tests against
## Redis and against Valkey.
test: deps lint test-redis test-valkey

## Unit and property tests, integration tests against redis-server. (Benchmarks are
## compiled by `lint`'s clippy --all-targets; they run with `make bench`/`bench-e2e`.)
test-redis: deps
	$(CARGO) test --lib --tests

## The integration tests against Valkey 8.1 (installed into .venv when missing).
test-valkey: deps
	REDBLOOM_SERVER=$$(scripts/valkey-server.sh) $(CARGO) test --tests

lint:
	$(CARGO) fmt --check
	$(CARGO) clippy --all-targets -- -D warnings

fmt:
	$(CARGO) fmt

## Criterion benchmarks of the core.
bench:
	$(CARGO) bench --bench core

## The end-to-end benchmark against redis-server (results: docs/benchmarks.md).
bench-e2e: build
	$(CARGO) bench --bench e2e

docker:
	docker build -f docker/Dockerfile -t redbloom .

clean:
	$(CARGO) clean
