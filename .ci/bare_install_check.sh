#!/usr/bin/env bash
# A wheel built here works on a bare machine: it is installed into a fresh venv, and the main
# commands run from a folder outside the tree with no compiler on PATH (PATH holds links to
# python and a few coreutils only) and a read-only HOME (a read-only bind mount in a private
# mount namespace; where that cannot be made, a HOME inside a regular file, where nothing can
# be created either).  Prints the build, install and first-run times and the wheel's size.
set -euo pipefail
cd "$(dirname "$0")/.."
tree=$PWD
python=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
say() { echo "bare install check: $*"; }
fail() { echo "bare install check FAILED: $*" >&2; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

t=$(now)
"$python" -m pip wheel -q --no-deps -w "$tmp/dist" . >"$tmp/build.log" 2>&1 || { tail -20 "$tmp/build.log"; fail "the wheel did not build"; }
build_s=$(since "$t")
wheel=$(ls "$tmp"/dist/surgeon-*.whl)
wheel_kb=$(( $(stat -c %s "$wheel") / 1024 ))

t=$(now)
"$python" -m venv "$tmp/venv"
"$tmp/venv/bin/python" -m pip install -q "$wheel" >"$tmp/install.log" 2>&1 || { tail -20 "$tmp/install.log"; fail "the wheel did not install"; }
install_s=$(since "$t")

# PATH without a compiler.
nobin=$tmp/nobin
mkdir "$nobin"
ln -s "$tmp/venv/bin/python" "$nobin/python"
for tool in cat ls cp mv rm mkdir env; do ln -s "$(command -v $tool)" "$nobin/$tool"; done
for tool in cc gcc g++ c++ clang clang++ nvcc cmake ninja make; do
    PATH=$nobin command -v "$tool" >/dev/null 2>&1 && fail "$tool is on the bare PATH"
done

home=$tmp/home
mkdir "$home"
if /usr/bin/unshare -m /bin/true 2>/dev/null; then
    how="read-only bind mount"
    bare() {
        /usr/bin/env -i HOME="$home" PATH="$nobin" LANG=C.UTF-8 \
            /usr/bin/unshare -m /bin/sh -c '/bin/mount --bind -o ro "$HOME" "$HOME" && exec "$@"' sh "$@"
    }
else
    how="HOME inside a file"
    : >"$tmp/file"
    bare() { /usr/bin/env -i HOME="$tmp/file/home" PATH="$nobin" LANG=C.UTF-8 "$@"; }
fi
bare /bin/sh -c 'touch "$HOME/x" 2>/dev/null' && fail "HOME is writable"

work=$tmp/work
mkdir "$work"
cp "$tree/samples/models/stn_ts_opset20_2d.onnx" "$work/stn.onnx"
cd "$work"
surgeon=$tmp/venv/bin/surgeon
check() {  # check NAME command...: runs it bare; no compile line on stderr
    local name=$1
    shift
    bare "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" || { cat "$tmp/$name.err" >&2; fail "$name exited non-zero"; }
    if grep -qi "compil" "$tmp/$name.err"; then cat "$tmp/$name.err" >&2; fail "$name compiled something"; fi
}

t=$(now)
check fuse "$surgeon" fuse stn.onnx stn.fused.onnx --validate
first_s=$(since "$t")
grep -q "validation PASSED" "$tmp/fuse.out" || fail "fuse --validate did not pass"
check run_ort "$surgeon" run stn.fused.onnx --engine ort --output-dir ort
check run_ref "$surgeon" run stn.fused.onnx --engine reference --output-dir ref
check validate "$surgeon" validate stn.onnx stn.fused.onnx
grep -q "validation PASSED" "$tmp/validate.out" || fail "validate did not pass"
check unfuse "$surgeon" unfuse stn.fused.onnx stn.std.onnx
check ortlib "$surgeon" ort-lib
check compare "$tmp/venv/bin/python" - <<'PY'
import glob, onnx, numpy as np
fused, std = onnx.load("stn.fused.onnx"), onnx.load("stn.std.onnx")
assert any(n.domain == "custom.ops" for n in fused.graph.node), "fuse wrote no custom.ops node"
assert not any(n.domain == "custom.ops" for n in std.graph.node), "unfuse left a custom.ops node"
for ort in glob.glob("ort/*.npy"):
    np.testing.assert_allclose(np.load(ort), np.load(ort.replace("ort/", "ref/")), atol=1e-5)
assert glob.glob("ort/*.npy"), "run wrote no .npy"
PY
lib=$(cat "$tmp/ortlib.out")
case $lib in "$tmp/venv/lib/"*/site-packages/surgeon_ops/ort/libsurgeon_ort_cpu.so) ;; *) fail "ort-lib printed $lib";; esac
[ -f "$lib" ] || fail "ort-lib's $lib is missing"

say "wheel $(basename "$wheel") ${wheel_kb} KiB, built in ${build_s} s, installed into a fresh venv in ${install_s} s"
say "no compiler on PATH, $how; first fuse --validate ${first_s} s; fuse, run (ort = reference), validate, unfuse, ort-lib all right"
