#!/usr/bin/env bash
# Tree hygiene, run first by .ci/run: no tracked file over BUD_MAX_TRACKED_BYTES (default 4 MiB)
# unless .ci/large-files.txt lists it as data on purpose, and no core dumps, logs or build outputs.
# Exit 1 with one line per offending file.
set -euo pipefail
cd "$(dirname "$0")/.."
limit=${BUD_MAX_TRACKED_BYTES:-4194304}
allow=.ci/large-files.txt
bad=0
while IFS= read -r -d '' f; do
  [ -f "$f" ] || continue
  size=$(stat -c %s "$f")
  base=${f##*/}
  case "$base" in
    core|core.[0-9]*|vgcore.*|*.log|*.o|*.a|*.so|*.fst|*.vcd)
      echo "check-tree: $f: core dump, log or build output is tracked (git rm --cached it)"
      bad=1; continue ;;
  esac
  if [ "$size" -gt "$limit" ] && ! grep -qxF "$f" "$allow" 2>/dev/null; then
    echo "check-tree: $f: $size bytes is over the $limit-byte limit; list it in $allow if it is data on purpose"
    bad=1
  fi
done < <(git ls-files -z)
exit $bad
