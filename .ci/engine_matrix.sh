#!/usr/bin/env bash
# Each engine with only itself installed, as deploying engineers have it: surgeon's wheel in a
# fresh venv with its required dependencies alone (no torch, no OpenVINO, no TensorRT), then with
# OpenVINO added, then torch.  At each step every command a deployment uses runs from a folder
# outside the tree: fuse, lint and run for each target, validate, unfuse --opset 16.  A command
# whose engine is missing must stop with one line naming what to install (exit 1, no traceback);
# a --target no engine knows is a usage error (exit 2).  TensorRT itself is never installed (it
# needs a GPU): --target tensorrt must work without it.  Usage: .ci/engine_matrix.sh [WHEEL]
# (default: a wheel built here, reusing the build folder).  Prints each step's time.
set -euo pipefail
cd "$(dirname "$0")/.."
tree=$PWD
python=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
say() { echo "engine matrix: $*"; }
fail() { echo "engine matrix FAILED: $*" >&2; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

t=$(now)
wheel=${1:-}
if [ -z "$wheel" ]; then
    "$python" -m pip wheel -q --no-deps -w "$tmp/dist" . >"$tmp/build.log" 2>&1 || { tail -20 "$tmp/build.log"; fail "the wheel did not build"; }
    wheel=$(ls "$tmp"/dist/surgeon-*.whl)
fi
[ -f "$wheel" ] || fail "no wheel at $wheel"
wheel=$(cd "$(dirname "$wheel")" && pwd)/$(basename "$wheel")
build_s=$(since "$t")

t=$(now)
"$python" -m venv "$tmp/venv"
py=$tmp/venv/bin/python
surgeon=$tmp/venv/bin/surgeon
"$py" -m pip install -q "$wheel" >"$tmp/install.log" 2>&1 || { tail -20 "$tmp/install.log"; fail "the wheel did not install"; }
install_s=$(since "$t")
# The release of OpenVINO the wheel's extension was built against ("" when it has none).
ov_release=$("$py" -c "import importlib.resources as r; f = r.files('surgeon_ops') / 'openvino' / 'openvino_version.txt'; print(f.read_text().strip() if f.is_file() else '')")

work=$tmp/work
mkdir "$work"
cp "$tree/samples/models/stn_ts_opset20_2d.onnx" "$work/stn.onnx"
# For OpenVINO, a sample whose theta is a model input: no reduced-precision hazard refuses the write.
cp "$tree/samples/models/affine_ts_opset20_2d_static.onnx" "$work/affine.onnx"
cd "$work"

n=0
expect() {  # expect CODE PATTERN command...: its exit code; PATTERN ("" for none) on its output
    local code=$1 pattern=$2 got=0
    shift 2
    n=$((n + 1))
    "$@" >"$tmp/out" 2>"$tmp/err" || got=$?
    local what="${*#"$tmp/venv/bin/"}"
    if [ "$got" != "$code" ]; then cat "$tmp/out" "$tmp/err" >&2; fail "$step: \`$what\` exited $got, not $code"; fi
    if grep -q "Traceback" "$tmp/err"; then cat "$tmp/err" >&2; fail "$step: \`$what\` printed a traceback"; fi
    if [ -n "$pattern" ] && ! grep -q -- "$pattern" "$tmp/out" "$tmp/err"; then
        cat "$tmp/out" "$tmp/err" >&2; fail "$step: \`$what\` did not say '$pattern'"
    fi
    if [ "$code" = 1 ] && [ "$(grep -c . "$tmp/err")" != 1 ]; then  # a command that stops says one line
        cat "$tmp/err" >&2; fail "$step: \`$what\` stopped with more than one line"
    fi
}
absent() { for m in "$@"; do "$py" -c "import $m" 2>/dev/null && fail "$step: $m is installed"; done; return 0; }

engine_free() {  # what needs no optional engine: TensorRT's and onnxruntime's targets, run, validate, unfuse
    expect 0 "wrote stn.trt.onnx" "$surgeon" fuse stn.onnx stn.trt.onnx --target tensorrt --input-shape x:1,1,28,28
    expect 0 "tensorrt: no hazards" "$surgeon" lint stn.trt.onnx --target tensorrt
    expect 0 "wrote stn.ort.onnx" "$surgeon" fuse stn.onnx stn.ort.onnx --target onnxruntime
    expect 0 "onnxruntime: no hazards" "$surgeon" lint stn.ort.onnx --target onnxruntime --ort-library surgeon
    expect 0 "" "$surgeon" run stn.ort.onnx -q --output-dir out
    ls out/*.npy >/dev/null 2>&1 || fail "$step: run wrote no .npy"
    expect 0 "validation PASSED" "$surgeon" validate stn.onnx stn.ort.onnx -q
    expect 0 "wrote stn.std16.onnx" "$surgeon" unfuse stn.ort.onnx stn.std16.onnx --opset 16
    expect 0 "wrote stn.native16.onnx" "$surgeon" unfuse stn.onnx stn.native16.onnx --opset 16
    expect 2 "Invalid value for '--target'" "$surgeon" fuse stn.onnx stn.x.onnx --target tensorrtt
    expect 2 "Invalid value for '--target'" "$surgeon" lint stn.onnx --target openvin
    [ ! -e stn.x.onnx ] || fail "$step: a misspelt --target wrote its output"
}

step="wheel alone"
t=$(now)
absent openvino torch tensorrt
engine_free
install="pip install openvino${ov_release:+==$ov_release}"
expect 1 "$install" "$surgeon" fuse affine.onnx affine.ov.onnx --target openvino
[ ! -e affine.ov.onnx ] || fail "$step: fuse --target openvino wrote its output without OpenVINO"
expect 1 "pip install openvino" "$surgeon" lint stn.ort.onnx --target openvino
expect 1 "$install" "$surgeon" lint stn.ort.onnx --target openvino --ov-extension surgeon
expect 1 "$install" "$surgeon" run stn.ort.onnx --engine openvino
expect 1 "pip install openvino" "$surgeon" validate stn.onnx stn.ort.onnx --engine openvino
alone_s=$(since "$t")
alone_n=$n

step="+ openvino"
t=$(now)
"$py" -m pip install -q "openvino${ov_release:+==$ov_release}" >"$tmp/ov.log" 2>&1 || { tail -20 "$tmp/ov.log"; fail "openvino did not install"; }
ov_install_s=$(since "$t")
t=$(now)
absent torch tensorrt
engine_free
if [ -n "$ov_release" ]; then
    expect 0 "wrote affine.ov.onnx" "$surgeon" fuse affine.onnx affine.ov.onnx --target openvino
    expect 0 "openvino: no hazards" "$surgeon" lint affine.ov.onnx --target openvino --ov-extension surgeon
    expect 0 "OpenVINO CPU" "$surgeon" run affine.ov.onnx --engine openvino
    expect 0 "validation PASSED" "$surgeon" validate affine.onnx affine.ov.onnx --engine openvino -q
else  # a wheel built without OpenVINO has no extension: the line says how to get one
    expect 1 "reinstall surgeon" "$surgeon" fuse affine.onnx affine.ov.onnx --target openvino
fi
ov_s=$(since "$t")
ov_n=$((n - alone_n))

step="+ torch"
t=$(now)
"$py" -m pip install -q torch==2.13.0 >"$tmp/torch.log" 2>&1 || { tail -20 "$tmp/torch.log"; fail "torch did not install"; }
torch_install_s=$(since "$t")
t=$(now)
absent tensorrt
engine_free
expect 0 "" "$py" -c "import torch, surgeon_ops.torch as st; x = torch.rand(1, 1, 4, 4); st.fused_grid_sample(x, torch.eye(2, 3)[None], x.size())"
torch_s=$(since "$t")
torch_n=$((n - alone_n - ov_n))

say "wheel $(basename "$wheel") (${build_s} s to build or find), installed with its requirements alone in ${install_s} s"
say "wheel alone (no torch, OpenVINO, TensorRT): ${alone_n} commands right in ${alone_s} s; OpenVINO's say \`$install\` in one line"
say "+ openvino${ov_release:+ $ov_release} (installed in ${ov_install_s} s): ${ov_n} commands right in ${ov_s} s"
say "+ torch 2.13.0 (installed in ${torch_install_s} s): ${torch_n} commands right in ${torch_s} s; TensorRT never installed"
