# Helpers the end-to-end shell tests source: `source "$src/tests/lib.sh" NAME` after `cd` into
# the test's work directory. NAME prefixes every failure message.
e2e_name=${1:-e2e}

# fail MESSAGE...: the test fails with MESSAGE.
fail() { echo "$e2e_name: $*" >&2; exit 1; }

# expect EXIT PATTERN CMD...: CMD exits EXIT and prints PATTERN (stdout+stderr, kept in out.txt).
expect() {
  local want=$1 pat=$2
  shift 2
  local rc=0
  "$@" > out.txt 2>&1 || rc=$?
  [ "$rc" = "$want" ] || { cat out.txt >&2; fail "$* exited $rc, expected $want"; }
  grep -q -- "$pat" out.txt || { cat out.txt >&2; fail "$* did not print: $pat"; }
}

# start_server OUT ARGS...: `bud serve ARGS... --json` in the background, its output in OUT;
# waits (up to 60 s) for its listening line, then sets $server (its pid) and $addr.
start_server() {
  local out=$1
  shift
  rm -f "$out"
  "$bud" serve "$@" --json > "$out" 2>&1 &
  server=$!
  for ((i = 0; i < 1200; i++)); do
    grep -q '"listening"' "$out" 2>/dev/null && break
    kill -0 "$server" 2>/dev/null || { cat "$out" >&2; fail "bud serve $* exited early"; }
    sleep 0.05
  done
  addr=$(sed -n 's/.*"listening":"\([^"]*\)".*/\1/p' "$out")
  [ -n "$addr" ] || { cat "$out" >&2; fail "bud serve $* did not listen"; }
}

# stop_server: SIGTERM to the server started last; it must exit 0.
stop_server() {
  [ -n "${server:-}" ] || return 0
  kill -TERM "$server"
  local rc=0
  wait "$server" || rc=$?
  server=""
  [ "$rc" = 0 ] || fail "bud serve exited $rc on SIGTERM"
}
