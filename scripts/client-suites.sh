#!/usr/bin/env bash
# The client libraries' own bloom test suites, as their authors publish them: the source
# distributions of redis-py and valkey-py on PyPI carry tests/test_bloom.py and
# tests/test_asyncio/test_bloom.py. This downloads each pinned sdist once (checked against
# its SHA-256), unpacks it into .venv/client-suites/, and installs pytest and the plugins
# those suites use into .venv. Nothing of theirs is committed. tests/it/clients.rs runs the
# suites against a real server (tests/clients/python/suite_plugin.py); `make test-deps`
# (scripts/install-deps.sh --test) runs this. Run from anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv.sh

SUITES=.venv/client-suites
# name==version sha256 (of the .tar.gz PyPI serves)
PINNED=(
  "redis==$REDIS_PY_VERSION 6e1a19beef9225c83efd689c7e6b7da2d5215b1f42cd13b7fc3714d0a09c7b25"
  "valkey==6.1.1 5880792990c6c2b5eb604a5ed5f98f300880b6dd92d123819b66ed54bb259731"
)
# What the suites import or configure (pyproject's asyncio_mode, timeout).
TEST_TOOLS=(pytest==9.2.0 pytest-asyncio==1.5.0 pytest-timeout==2.4.0 packaging==26.4)

ensure_venv
if ! .venv/bin/python -c "import pytest, pytest_asyncio, pytest_timeout, packaging" 2>/dev/null; then
  echo "installing ${TEST_TOOLS[*]} into .venv ..."
  .venv/bin/pip install --quiet --disable-pip-version-check "${TEST_TOOLS[@]}"
fi
mkdir -p "$SUITES"
for pin in "${PINNED[@]}"; do
  read -r spec sha <<<"$pin"
  name=${spec%%==*} version=${spec##*==}
  folder="$SUITES/$name-$version"
  [ -f "$folder/tests/test_bloom.py" ] && continue
  echo "downloading the $name $version source distribution (its tests) ..."
  rm -rf "$SUITES/download"
  .venv/bin/pip download --quiet --disable-pip-version-check --no-deps --no-binary :all: \
    "$spec" -d "$SUITES/download"
  archive="$SUITES/download/$name-$version.tar.gz"
  echo "$sha  $archive" | sha256sum --check --quiet
  tar -xzf "$archive" -C "$SUITES"
  rm -rf "$SUITES/download"
done
