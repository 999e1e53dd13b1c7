#!/usr/bin/env bash
# End to end: git bisect run tools/git-bisect-rtl.sh on a scratch history names the RTL commit
# that broke a packet. History: base, a neutral (docs) commit, an RTL regression (POST rounding
# dropped in npu_compute.sv), a comment-only RTL change. One build tree is reused for every step
# (target bud only); the per-step build times are printed (docs/packets.md).
#   git_bisect_rtl_test.sh SOURCE_DIR WORK_DIR [BUILD_NAME]
# The build tree is WORK_DIR/repo/BUILD_NAME (ignored by the tree's .gitignore /build*/): named like
# the build tree running the test and configured with the same (default) build type, the relative
# paths ccache sees (CCACHE_BASEDIR is the source dir) and the flags are the same, so the first
# build reuses that tree's objects; the verilated model files embed absolute .sv paths and are
# recompiled once. (Configured as Release, it recompiled everything: 822 s of CI's 1503 s of
# tests, run serially.)
set -euo pipefail
src=$(readlink -f "$1")
work=$2
mkdir -p "$work"
work=$(readlink -f "$work")
repo=$work/repo
build=$repo/${3:-build}
rm -f "$work/fail.bpk" "$work"/*.out
mkdir -p "$repo"
# Keep the build tree of an earlier run (ccache and make make it incremental), nothing else.
find "$repo" -mindepth 1 -maxdepth 1 ! -name "$(basename "$build")" -exec rm -rf {} +

fail() { echo "FAIL: $*" >&2; exit 1; }

# A copy of the source tree as it is now (tracked and untracked, not ignored).
(cd "$src" && git ls-files -z -co --exclude-standard) | (cd "$src" && tar --null -T - -cf -) |
  (cd "$repo" && tar -m -xf -)  # -m: fresh mtimes, so make never trusts an earlier run's outputs
cd "$repo"
git init -q
git config user.email test@bud
git config user.name bud-test
git config commit.gpgsign false
git add -A && git commit -qm base
base=$(git rev-parse HEAD)
echo "neutral line" >>docs/packets.md
git commit -qam neutral
grep -q '((p + (64.sd1 <<< (sh - 5.d1))) >>> sh)' rtl/npu_compute.sv ||
  fail "POST rounding line not found in rtl/npu_compute.sv"
sed -i 's/((p + (64.sd1 <<< (sh - 5.d1))) >>> sh)/(p >>> sh)/' rtl/npu_compute.sv
git commit -qam "regression: POST drops rounding"
regress=$(git rev-parse HEAD)
sed -i 's|^\(\s*if (s > clamp_hi) s = clamp_hi;\)$|\1  // clamp above|' rtl/npu_compute.sv
git diff --quiet && fail "comment-only change did not apply"
git commit -qam "comment only"

script=$work/git-bisect-rtl.sh
cp "$src/tools/git-bisect-rtl.sh" "$script"

# Usage errors never count as bad: 255 aborts git bisect.
set +e
"$repo/tools/git-bisect-rtl.sh" "$work/none.bpk" 2>"$work/inside.out"; rc=$?
[ $rc -eq 255 ] || fail "script inside the tree: exit $rc, want 255"
grep -q 'Copy it first' "$work/inside.out" || fail "no copy hint"
"$script" 2>/dev/null; rc=$?
[ $rc -eq 255 ] || fail "no packet: exit $rc, want 255"
"$script" --build "$build" "$work/missing.bpk" 2>/dev/null; rc=$?
[ $rc -eq 255 ] || fail "missing packet: exit $rc, want 255"
set -e

# The failing packet, recorded on HEAD (the regression is there).
BUD_BISECT_JOBS=${BUD_BISECT_JOBS:-2}
export BUD_BISECT_JOBS
t0=$(date +%s)
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$repo" -B "$build" >"$work/configure.out" 2>&1
fi
cmake --build "$build" --target bud -j "$BUD_BISECT_JOBS" >"$work/build-head.out" 2>&1 ||
  { tail -30 "$work/build-head.out"; fail "build of HEAD"; }
echo "build of HEAD: $(( $(date +%s) - t0 )) s"
set +e
"$build/bud" run gemm_small --record "$work/fail.bpk" >"$work/run.out" 2>&1; rc=$?
set -e
[ $rc -eq 1 ] || { cat "$work/run.out"; fail "bud run gemm_small on the regression: exit $rc, want 1"; }

git bisect start HEAD "$base" >/dev/null
set +e
git bisect run "$script" --build "$build" "$work/fail.bpk" >"$work/bisect.out" 2>&1; rc=$?
set -e
git bisect log >"$work/bisect-log.out" || true
git bisect reset >/dev/null 2>&1 || true
cat "$work/bisect.out"
grep 'git-bisect-rtl: .*build' "$work/bisect.out" || true
[ $rc -eq 0 ] || fail "git bisect run exited $rc"
grep -q "^$regress is the first bad commit" "$work/bisect.out" ||
  fail "git bisect did not name the regression $regress"
echo "PASS: git bisect named $regress"
