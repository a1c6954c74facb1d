#!/usr/bin/env bash
# The sdist is publishable and builds: `python -m build --sdist` makes it, `twine check` passes
# on it, it holds every file the repository tracks (and LICENSE, PKG-INFO) and no build output
# (build/, dist/, compiled libraries, caches), and `pip install` of it into a fresh venv
# compiles and installs surgeon (the onnxruntime headers come from $SURGEON_CACHE_DIR, fetched
# by an earlier build, or are fetched now), whose `fuse --validate` then passes from a folder
# outside the tree.  Prints the sdist's size and the times; the build from the sdist is a whole
# compile (it cannot share the tree's build folder: its sources lie elsewhere).  build and twine
# are pip-installed into a throwaway venv.
set -euo pipefail
cd "$(dirname "$0")/.."
tree=$PWD
python=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
say() { echo "sdist check: $*"; }
fail() { echo "sdist check FAILED: $*" >&2; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

t=$(now)
"$python" -m venv --without-pip "$tmp/tools"  # this pip installs into it (--python)
"$python" -m pip --python "$tmp/tools/bin/python" install -q build twine >"$tmp/tools.log" 2>&1 || { tail -20 "$tmp/tools.log"; fail "build and twine did not install"; }
tools_s=$(since "$t")

t=$(now)
"$tmp/tools/bin/python" -m build --sdist -o "$tmp/dist" . >"$tmp/sdist.log" 2>&1 || { tail -20 "$tmp/sdist.log"; fail "the sdist did not build"; }
sdist=$(ls "$tmp"/dist/surgeon-*.tar.gz)
sdist_kb=$(( $(stat -c %s "$sdist") / 1024 ))
"$tmp/tools/bin/twine" check --strict "$sdist" >"$tmp/twine.log" 2>&1 || { cat "$tmp/twine.log"; fail "twine check failed on $(basename "$sdist")"; }

# What it holds: the tracked files (when this is a git checkout), nothing built.
git ls-files -z 2>/dev/null >"$tmp/tracked" || : >"$tmp/tracked"
"$python" - "$sdist" "$tmp/tracked" <<'PY' || fail "the sdist's contents are wrong (above)"
import fnmatch, os, sys, tarfile
with tarfile.open(sys.argv[1]) as tar:
    names = [m.name for m in tar.getmembers() if m.isfile()]
top = {n.split("/", 1)[0] for n in names}
assert len(top) == 1, f"not one top folder: {sorted(top)}"
files = {n.split("/", 1)[1] for n in names}
tracked = {p for p in open(sys.argv[2], "rb").read().decode().split("\0") if p and os.path.isfile(p)}
need = tracked | {"PKG-INFO", "LICENSE", "pyproject.toml", "CMakeLists.txt", "README.md", "ops/OPS.md"}
built = ["build/*", "dist/*", "wheelhouse/*", "*.so", "*.whl", "*.pyc", "*/__pycache__/*",
         "*.egg-info/*", ".pytest_cache/*", "*/.pytest_cache/*", "out/*", ".git/*"]
bad = [f"missing {p}" for p in sorted(need - files)]
bad += [f"holds {n}" for n in sorted(files) if any(fnmatch.fnmatch(n, g) for g in built)]
print("\n".join(bad[:20]), file=sys.stderr, end="\n" if bad else "")
sys.exit(1 if bad else 0)
PY
sdist_s=$(since "$t")

t=$(now)
"$python" -m venv "$tmp/venv"
"$tmp/venv/bin/python" -m pip install -q "$sdist" >"$tmp/install.log" 2>&1 || { tail -30 "$tmp/install.log"; fail "the sdist did not build and install"; }
install_s=$(since "$t")

mkdir "$tmp/work"
cp "$tree/samples/models/stn_ts_opset20_2d.onnx" "$tmp/work/stn.onnx"
cd "$tmp/work"
"$tmp/venv/bin/surgeon" fuse stn.onnx stn.fused.onnx --validate >"$tmp/fuse.out" 2>&1 || { cat "$tmp/fuse.out"; fail "fuse --validate exited non-zero"; }
grep -q "validation PASSED" "$tmp/fuse.out" || { cat "$tmp/fuse.out"; fail "fuse --validate did not pass"; }
lib=$("$tmp/venv/bin/surgeon" ort-lib)
case $lib in "$tmp/venv/lib/"*/site-packages/surgeon_ops/ort/libsurgeon_ort_cpu.so) ;; *) fail "ort-lib printed $lib";; esac

say "build, twine installed in ${tools_s} s; sdist $(basename "$sdist") ${sdist_kb} KiB, built, twine-checked and its contents checked in ${sdist_s} s"
say "built from the sdist and installed into a fresh venv in ${install_s} s; fuse --validate passed there, outside the tree"
