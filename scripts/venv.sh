# Sourced by the install scripts: `ensure_venv` creates the project-local virtual
# environment .venv (installing Debian's python3-venv first when running as root and it is
# missing). Run from the repository root.

# The redis-py release the client tests use (installed into .venv; its sdist's bloom suite
# is scripts/client-suites.sh's).
REDIS_PY_VERSION=8.1.0
ensure_venv() {
  [ -x .venv/bin/pip ] && return 0
  python3 -m venv .venv >/dev/null 2>&1 && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "python3 -m venv failed: install python3-venv" >&2
    exit 1
  fi
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
  python3 -m venv .venv >/dev/null
}
