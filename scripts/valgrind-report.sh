#!/usr/bin/env bash
# Summarises the valgrind logs of `make valgrind`: one line per server, then every error
# or leak record with a frame of the module (libredbloom.so, redbloom::, redis_module::). Exits 1 if there is any such record.
set -euo pipefail
dir=${1:?usage: valgrind-report.sh LOG_DIR}
shopt -s nullglob
logs=("$dir"/vg-*.log)
[ ${#logs[@]} -gt 0 ] || { echo "no valgrind logs in $dir"; exit 1; }
ours=0
# Frames of the module: its file, or (with debug info) its crates' function names.
frames='libredbloom|redbloom::|redis_module::'
for log in "${logs[@]}"; do
  errors=$(grep -o 'ERROR SUMMARY: [0-9]*' "$log" | tail -1 || true)
  definite=$(grep -o 'definitely lost: [0-9,]* bytes' "$log" | tail -1 || true)
  echo "$(basename "$log"): ${errors:-no summary (killed)} ${definite:+/ $definite}"
  # Records are separated by lines holding only the "==pid==" prefix.
  records=$(awk -v pat="$frames" '/^==[0-9]+== ?$/ { if (r ~ pat) print r; r = ""; next }
                 { r = r $0 "\n" } END { if (r ~ pat) print r }' "$log")
  if [ -n "$records" ] && grep -q 'Invalid\|uninitialised\|lost in\|Mismatched\|overlap' <<<"$records"; then
    ours=1
    echo "$records"
  fi
done
if [ "$ours" -ne 0 ]; then
  echo "valgrind: records with frames of the module (above)"
  exit 1
fi
echo "valgrind: no error or leak record with a frame of the module in ${#logs[@]} servers"
