# redbloom — build, run and test. `make run` and `make test` are the two set-up commands.
PORT ?= 6379
CARGO ?= cargo
MODULE := target/release/libredbloom.so

.PHONY: all deps build run test lint fmt unit integration bench docker clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	$(CARGO) build --release

## Start redis-server in the foreground on 127.0.0.1:$(PORT) with the module loaded.
run: build
	redis-server --port $(PORT) --bind 127.0.0.1 --save "" --loadmodule $(CURDIR)/$(MODULE)

## Everything CI runs: formatting, lints, unit and integration tests.
test: deps lint
	$(CARGO) test --all-targets

lint:
	$(CARGO) fmt --check
	$(CARGO) clippy --all-targets -- -D warnings

fmt:
	$(CARGO) fmt

bench:
	$(CARGO) bench --bench core

docker:
	docker build -f docker/Dockerfile -t redbloom .

clean:
	$(CARGO) clean
