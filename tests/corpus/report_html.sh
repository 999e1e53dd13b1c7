#!/usr/bin/env bash
# `bud corpus report --html` as a user meets it: a small history (3 runs on 3 revisions: a packet
# fixed, one newly failing, one flaky, triggers armed and hit, counters seen) recorded with
# `bud corpus record`, the page rendered, then checked in headless Chromium by
# tests/html/check_html.py (every plot has data marks, the page loads nothing, the names are in
# its DOM). Also: --json agrees with the history, and an empty database is one clear error.
#   report_html.sh BUD PYTHON CHECKER WORK_DIR          (ctest corpus:report-html)
set -euo pipefail
bud=$1 python=$2 checker=$3 work=$4
rm -rf "$work"
mkdir -p "$work"
fail() { echo "report_html: FAIL: $*" >&2; exit 1; }
# run REVISION RUN VERDICT_A VERDICT_B VERDICT_C HITS: one results file of packets a, b, c.
results() {
  "$python" - "$work/$2.json" "$1" "$3" "$4" "$5" "$6" <<'PY'
import json, sys
path, rev, hits = sys.argv[1], sys.argv[2], sys.argv[6].split(",") if sys.argv[6] else []
packets = []
for i, (name, verdict) in enumerate(zip("abc", sys.argv[3:6])):
    packets.append({
        "packet": f"{name}.bpk", "verdict": verdict, "exit_code": 0, "message": "",
        "notes": [], "recorded_revision": rev, "start_cycle": 0, "end_cycle": 5000,
        "digests_checked": 4, "windows_checked": 2, "divergence": None,
        "recorded_symptom": None, "replay_symptom": None,
        "evidence": {"triggers_armed": ["stall_burst", "starve"], "triggers_hit": hits,
                     "counters": ["cycles", "load.stall_mem", "gemm.active"],
                     "counters_observed": ["cycles", "gemm.active"][: i + 1]},
        "corpus_index": i, "seconds": 0.5})
json.dump({"format": "bud-corpus-shard", "version": 1, "shard": {"index": 0, "total": 1},
           "source": "--shard", "revision": rev, "total_packets": 3, "exit_code": 1,
           "packets": packets}, open(path, "w"))
PY
  "$bud" corpus record "$work/e.db" "$work/$2.json" --run "$2" >/dev/null || fail "record $2"
}
results rev-a ci-1 reproduced passed passed ""
results rev-b ci-2 fixed reproduced passed stall_burst
results rev-b ci-3 fixed reproduced reproduced stall_burst,starve
"$bud" corpus report "$work/e.db" --json >"$work/r.json" || fail "report --json"
"$python" - "$work/r.json" <<'PY' || fail "report --json does not match the history: $(cat "$work/r.json")"
import json, sys
r = json.load(open(sys.argv[1]))["revisions"]
assert [x["revision"] for x in r] == ["rev-a", "rev-b"], r
b = r[1]
assert b["newly_fixed"] == ["a.bpk"] and b["newly_failing"] == ["b.bpk", "c.bpk"], b
assert b["flaky"] == ["c.bpk"] and b["trigger_coverage"] == 1.0, b
assert r[0]["trigger_coverage"] == 0.0 and b["counters_observed"] == ["cycles", "gemm.active"], r
PY
"$bud" corpus report "$work/e.db" --html "$work/report.html" >/dev/null || fail "report --html"
"$python" "$checker" "$work/report.html" --min-plots 3 --text "bud corpus report" \
  --text "Trigger coverage" --text "rev-b" --text "c.bpk" || fail "check_html rejected the page"
# Nothing recorded yet: one error line, exit 2, no page.
"$bud" corpus record "$work/empty.db" "$work/ci-1.json" --run x >/dev/null
sqlite3 "$work/empty.db" "DELETE FROM results" 2>/dev/null || "$python" -c \
  "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('DELETE FROM results'); c.commit()" \
  "$work/empty.db"
status=0
"$bud" corpus report "$work/empty.db" --html "$work/empty.html" >/dev/null 2>"$work/empty.err" || status=$?
[ "$status" -eq 2 ] || fail "an empty database gave status $status, not 2"
grep -q "no results yet" "$work/empty.err" || fail "no clear error: $(cat "$work/empty.err")"
[ ! -e "$work/empty.html" ] || fail "a page was left for an empty database"
echo "report_html: PASS"
