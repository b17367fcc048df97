#!/usr/bin/env bash
# Builds the module from exactly the files docker/Dockerfile's build stage copies, without a
# Docker engine: reads its WORKDIR and `COPY <src>... <dest>` lines (those without --from),
# copies each source to <dest> under a fresh context directory, and runs the stage's
# `RUN cargo build …` there, offline, with the shared CARGO_HOME. The build uses the dev
# profile unless DOCKER_CHECK_RELEASE=1 (the Dockerfile's --release costs a fat-LTO build);
# a missing file fails either way. Then checks the artifact the final stage copies exists.
# Usage: scripts/docker-check.sh <work dir> (kept between runs: the build is incremental).
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:?usage: scripts/docker-check.sh <work dir>}
dockerfile=docker/Dockerfile

mkdir -p "$work"
work=$(cd "$work" && pwd)
context="$work/context"
target="$work/target"
workdir=/
build=
artifact=
stage=0
copies=()
while read -r instruction rest; do
  case "${instruction^^}" in
    FROM) stage=$((stage + 1)) ;;
    WORKDIR) [ "$stage" = 1 ] && workdir=$rest ;;
    COPY)
      # shellcheck disable=SC2206
      words=($rest)
      if [[ ${words[0]} == --from=* ]]; then
        artifact=${words[1]}
        continue
      fi
      [ "$stage" = 1 ] || { echo "$dockerfile: COPY from the context outside the build stage" >&2; exit 1; }
      dest=${words[${#words[@]} - 1]}
      [[ $dest == /* ]] || dest="$workdir/$dest"
      for src in "${words[@]:0:${#words[@]}-1}"; do
        copies+=("$src" "$dest")
      done
      ;;
    RUN) [ "$stage" = 1 ] && [[ $rest == cargo\ build* ]] && build=$rest ;;
  esac
done < <(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$dockerfile" | grep -v '^\s*#')

[ -n "$build" ] || { echo "$dockerfile: no RUN cargo build in the build stage" >&2; exit 1; }
[ -n "$artifact" ] || { echo "$dockerfile: no COPY --from=build of the module" >&2; exit 1; }
[ "${#copies[@]}" -gt 0 ] || { echo "$dockerfile: no COPY lines" >&2; exit 1; }

# A fresh context holding only the copied files (`cp -a` keeps their modification times, so
# cargo rebuilds only what changed since the last check).
rm -rf "$context"
mkdir -p "$context"
for ((i = 0; i < ${#copies[@]}; i += 2)); do
  src=${copies[i]}
  dest=$context/${copies[i + 1]#/}
  [ -e "$src" ] || { echo "$dockerfile: COPY $src: no such file in the repository" >&2; exit 1; }
  if [ -d "$src" ]; then
    mkdir -p "$dest"
    cp -a "$src/." "$dest/"
  else
    [[ ${copies[i + 1]} == */ ]] && mkdir -p "$dest"
    cp -a "$src" "$dest"
  fi
done

# shellcheck disable=SC2206
args=($build)
if [ "${DOCKER_CHECK_RELEASE:-0}" != 1 ]; then
  kept=()
  for a in "${args[@]}"; do [ "$a" = --release ] || kept+=("$a"); done
  args=("${kept[@]}")
  profile=debug
else
  profile=release
fi
echo "docker-check: ${args[*]} --offline in a context of $((${#copies[@]} / 2)) COPY sources (WORKDIR $workdir)"
(cd "$context/${workdir#/}" && CARGO_TARGET_DIR="$target" "${args[@]}" --offline --quiet)

# The final stage copies <workdir>/target/<profile>/libredbloom.so; it was built.
built="$target/$profile/${artifact##*/target/release/}"
[ -f "$built" ] || { echo "docker-check: $artifact was not built ($built missing)" >&2; exit 1; }
echo "docker-check: the Dockerfile's copy set builds $(basename "$built")"
