#!/usr/bin/env bash
# Installs what redbloom needs on Debian. Does nothing when present.
#   scripts/install-deps.sh          what building and running needs (`make run`): libclang
#                                    (bindgen in the redis-module crate) and redis-server.
#   scripts/install-deps.sh --test   that, plus what only the tests need (`make test`): Node.js
#                                    and npm with the pinned node-redis of tests/clients/node,
#                                    and redis-py in the project's .venv (the real-client
#                                    tests, tests/it/clients.rs), and the bloom suites of
#                                    redis-py and valkey-py (scripts/client-suites.sh).
#   scripts/install-deps.sh --clients   only the client libraries and suites (no apt-get); the
#                                    client tests run this themselves when one is missing.
set -euo pipefail

mode=${1:-run}
case "$mode" in
  run | --test | --clients) ;;
  *) echo "usage: $0 [--test | --clients]" >&2; exit 2 ;;
esac

cd "$(dirname "$0")/.."
. scripts/venv.sh

# The client libraries the real-client tests use, at pinned versions: node-redis from
# tests/clients/node/package-lock.json, redis-py ($REDIS_PY_VERSION, scripts/venv.sh) into
# .venv (shared with Valkey's install).
client_packages() {
  if [ ! -d tests/clients/node/node_modules/redis ]; then
    echo "installing node-redis (npm ci in tests/clients/node) ..."
    (cd tests/clients/node && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  fi
  if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c "import redis, sys; sys.exit(redis.__version__ != '$REDIS_PY_VERSION')" 2>/dev/null; then
    ensure_venv
    echo "installing redis-py $REDIS_PY_VERSION into .venv ..."
    .venv/bin/pip install --quiet --disable-pip-version-check "redis==$REDIS_PY_VERSION"
  fi
  scripts/client-suites.sh
}

missing=()
if ! ls /usr/lib/llvm-*/lib/libclang*.so* >/dev/null 2>&1 && ! ldconfig -p 2>/dev/null | grep -q libclang; then
  missing+=(libclang-dev)
elif ! ls /usr/lib/llvm-*/lib/clang/*/include/stddef.h >/dev/null 2>&1; then
  missing+=(libclang-dev)
fi
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
if [ "$mode" = --clients ]; then
  client_packages
  exit 0
fi
if [ "$mode" = --test ]; then
  command -v node >/dev/null 2>&1 || missing+=(nodejs)
  command -v npm >/dev/null 2>&1 || missing+=(npm)
  command -v python3 >/dev/null 2>&1 || missing+=(python3)
fi

if [ ${#missing[@]} -eq 0 ]; then
  [ "$mode" = --test ] && client_packages
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "redbloom needs these Debian packages: ${missing[*]}" >&2
  echo "install them with: sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
  exit 1
fi
echo "installing ${missing[*]} ..."
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# Debian starts a system redis-server on 6379 on install where it can; tests never use it,
# but `make run` wants that port.
if command -v systemctl >/dev/null 2>&1; then systemctl disable --now redis-server >/dev/null 2>&1 || true; fi
if [ "$mode" = --test ]; then client_packages; fi
