#!/usr/bin/env bash
# git-bisect-rtl.sh: one step of `git bisect run` over RTL commits.
#
# The RTL is verilated and compiled into `bud`, so replaying a packet with an installed `bud`
# tests the same model at every commit. This script rebuilds the model and `bud` (target `bud`
# only) at the checked-out commit in one reused build tree, then replays the packet(s):
#
#   cp tools/git-bisect-rtl.sh /tmp/            # a copy outside the tree (see below)
#   git bisect start BAD GOOD
#   git bisect run /tmp/git-bisect-rtl.sh [--build DIR] PACKET...
#
# Exit status, as `git bisect run` reads it:
#   0    every packet replays without the symptom        (good)
#   1    a packet reproduces its symptom                 (bad)
#   125  the commit does not build, or no packet can be tested (skip)
#   255  usage error of this script or of `bud replay`: aborts the bisect, never "bad"
#
# Why a copy: git bisect checks out each commit, this script included; commits older than the
# script do not have it, and others may have another version. Run from inside the tree being
# bisected, the script refuses (exit 255) and prints the copy command.
#
# The build tree (default: $BUD_BISECT_BUILD, else <top>-build-bisect beside the source tree,
# outside it so checkouts never touch it) is configured once, with the project's default build
# type (as `make` configures build/), and rebuilt incrementally; with ccache (CMakeLists.txt enables
# it) the first build takes the objects of the tree you built already, and a commit whose
# verilated C++ did not change recompiles from the cache.
set -u

usage() {
  cat >&2 <<'EOF'
usage: git bisect run /path/outside/tree/git-bisect-rtl.sh [--build DIR] PACKET...
  rebuilds bud at the checked-out commit in DIR (default $BUD_BISECT_BUILD or
  <top>/../<top-name>-build-bisect), then runs
  bud replay --allow-revision-mismatch PACKET...
  exit: 0 good, 1 bad, 125 skip (build failure or untestable packet), 255 usage error
EOF
  exit 255
}

build=${BUD_BISECT_BUILD:-}
packets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build) [ $# -ge 2 ] || usage; build=$2; shift 2 ;;
    --build=*) build=${1#--build=}; shift ;;
    -h|--help) usage ;;
    --) shift; packets+=("$@"); break ;;
    -*) echo "git-bisect-rtl: unknown option $1" >&2; usage ;;
    *) packets+=("$1"); shift ;;
  esac
done
[ ${#packets[@]} -gt 0 ] || { echo "git-bisect-rtl: no packet given" >&2; usage; }

top=$(git rev-parse --show-toplevel 2>/dev/null) || {
  echo "git-bisect-rtl: run from inside the git work tree being bisected" >&2; exit 255; }
[ -f "$top/rtl/CMakeLists.txt" ] || {
  echo "git-bisect-rtl: $top is not a bud source tree (no rtl/CMakeLists.txt)" >&2; exit 255; }

self=$(readlink -f "${BASH_SOURCE[0]}")
case "$self" in
  "$top"/*)
    echo "git-bisect-rtl: $self is inside the tree being bisected; git bisect checks it out" \
         "at every commit. Copy it first:" >&2
    echo "  cp $self /tmp/ && git bisect run /tmp/$(basename "$self") ..." >&2
    exit 255 ;;
esac

abs_packets=()
for p in "${packets[@]}"; do
  [ -e "$p" ] || { echo "git-bisect-rtl: packet $p does not exist" >&2; exit 255; }
  abs_packets+=("$(readlink -f "$p")")
done

[ -n "$build" ] || build="$(dirname "$top")/$(basename "$top")-build-bisect"
mkdir -p "$build" || { echo "git-bisect-rtl: cannot create $build" >&2; exit 255; }
build=$(readlink -f "$build")

commit=$(git rev-parse --short HEAD)
log="$build/git-bisect-rtl.log"
start=$(date +%s%N)
{
  echo "=== $commit $(date -u +%FT%TZ)"
  if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$top" -B "$build"
  fi &&
  cmake --build "$build" --target bud -j "${BUD_BISECT_JOBS:-$(nproc)}"
} >>"$log" 2>&1
status=$?
end=$(date +%s%N)
ms=$(( (end - start) / 1000000 ))
printf 'git-bisect-rtl: %s: build %s in %d.%03d s (log %s)\n' "$commit" \
  "$([ $status -eq 0 ] && echo ok || echo FAILED)" $((ms / 1000)) $((ms % 1000)) "$log" >&2
[ $status -eq 0 ] || exit 125

bud=$(find "$build" -path '*/CMakeFiles' -prune -o -type f -name bud -perm -u+x -print | head -n 1)
[ -n "$bud" ] || { echo "git-bisect-rtl: no bud binary under $build" >&2; exit 125; }

"$bud" replay --allow-revision-mismatch "${abs_packets[@]}"
rc=$?
case $rc in
  0) echo "git-bisect-rtl: $commit good" >&2; exit 0 ;;
  1) echo "git-bisect-rtl: $commit bad (symptom reproduced)" >&2; exit 1 ;;
  125) echo "git-bisect-rtl: $commit skip (packet cannot be tested)" >&2; exit 125 ;;
  2) echo "git-bisect-rtl: bud replay usage error; aborting" >&2; exit 255 ;;
  *) echo "git-bisect-rtl: bud replay exited $rc (crash?); skipping $commit" >&2; exit 125 ;;
esac
