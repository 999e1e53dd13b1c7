#!/usr/bin/env bash
# ctest: tools/python installs as a package (pyproject.toml) into a venv that sees Debian's
# python3-grpcio/python3-protobuf, offline; the installed package is typed, ships its stubs,
# runs the client test against `bud serve`, and without grpc fails with an ImportError naming
# python3-grpcio.   test_python_package.sh SYSTEM_PYTHON BUD_BINARY SOURCE_DIR WORK_DIR
set -euo pipefail
py=$1 bud=$2 src=$3 work=$4
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work"
# Install from a copy: an in-tree build would write build/ and *.egg-info into the sources.
cp -r "$src/tools/python" "$work/pkg"
rm -rf "$work/pkg/build" "$work/pkg"/*.egg-info
"$py" -m venv --system-site-packages "$work/venv"
"$work/venv/bin/pip" install --no-build-isolation --no-index --no-cache-dir -q "$work/pkg" \
  >"$work/pip.out" 2>&1 || { cat "$work/pip.out"; fail "pip install"; }
site=$("$work/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
for f in __init__.py client.py py.typed _proto/remote_pb2.py _proto/remote_pb2_grpc.py \
         _proto/remote_pb2.pyi _proto/packet_pb2.py; do
  [ -f "$site/bud_client/$f" ] || fail "installed package lacks bud_client/$f"
done
# Away from the source tree, the installed package is what gets imported.
cd "$work"
"$work/venv/bin/python" - <<'PY' || fail "import of the installed package"
import bud_client, sys
from bud_client._proto import packet_pb2, remote_pb2
assert bud_client.__file__.startswith(sys.prefix), bud_client.__file__
assert remote_pb2.DESCRIPTOR.package == "bud.remote.v1"
assert packet_pb2.DESCRIPTOR.package == "bud.replay.pb"
PY
"$work/venv/bin/python" "$src/tests/remote/test_python_client.py" --bud "$bud" --work "$work" \
  --installed || fail "client test with the installed package"
# grpc missing (blocked by a finder): one ImportError naming the Debian package.
set +e
msg=$("$work/venv/bin/python" - 2>&1 <<'PY'
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name == "grpc" or name.startswith("grpc."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, Block())
try:
    import bud_client
except ImportError as e:
    print(e)
    sys.exit(3)
sys.exit(0)
PY
)
rc=$?
set -e
[ $rc -eq 3 ] || fail "import without grpc: exit $rc, want an ImportError ($msg)"
case "$msg" in *python3-grpcio*) ;; *) fail "ImportError does not name python3-grpcio: $msg" ;; esac
# The committed stubs match the .proto files.
"$src/tools/python/regen_stubs.sh" "$work/regen" >/dev/null
diff -r -x __pycache__ "$src/tools/python/bud_client/_proto" "$work/regen" ||
  fail "bud_client/_proto is stale: run tools/python/regen_stubs.sh"
echo "PASS"
