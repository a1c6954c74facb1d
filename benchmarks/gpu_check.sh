#!/usr/bin/env bash
# The checks that need a GPU, as one script for a lent GPU machine (see README: Benchmarks).
# That machine's image already has torch (CUDA), onnx, onnxruntime, cv2 and pytest, and no
# network: build the wheel here first (nvcc is here, so it holds the CUDA variants) into dist/
# (ignored by git, named in the device run's carry):  pip wheel --no-deps -w dist .
# The script installs it (no dependencies: the image has them) and runs the tests from the tree.
# Logs go to $OUT when set (the device tool brings them back), else to /tmp.
# --smoke: the same tests, but the two benchmarks in their short mode (tiny shapes, a few
# engines), for a quick check of the machine and the scripts.  Without a GPU nothing here runs;
# benchmarks/test_smoke.py checks only its syntax (bash -n).
set -o pipefail
cd "$(dirname "$0")/.."
smoke=()
case "${1:-}" in
    --smoke) smoke=(--smoke) ;;
    "") ;;
    *) echo "usage: bash benchmarks/gpu_check.sh [--smoke]" >&2; exit 2 ;;
esac
logs=${OUT:-/tmp}
python3 -m pip install -q --no-deps --force-reinstall dist/surgeon-*.whl || exit 1
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c "import onnxruntime as o; print('onnxruntime', o.__version__, o.get_available_providers())"
# test_isa_fallbacks: such machines usually have AVX-512, so the AVX2 and baseline levels run
# there as fallbacks (this VM has no AVX-512 and runs only the baseline one).
python3 -m pytest -q -p no:cacheprovider -rs tests/kernels/test_cuda.py tests/kernels/test_precision.py \
    tests/kernels/test_installed.py tests/kernels/test_isa_fallbacks.py tests/ort/test_cuda.py \
    tests/torch/test_cuda.py tests/tensorrt/test_cuda.py -k "not a_build_without" 2>&1 |
    tee "$logs/gpu_tests.log"
tests=$?
python3 benchmarks/kernels.py --gpu-only "${smoke[@]}" 2>&1 | tee "$logs/gpu_bench.log"
bench=$?
# TensorRT with surgeon's plugins: an engine per fused 2-D sample, checked against onnxruntime on
# the original and timed against TensorRT on the unfused model. This image has no TensorRT (its
# libraries come from NVIDIA's own index): the script then says SKIPPED and exits 0.
python3 benchmarks/tensorrt_check.py "${smoke[@]}" 2>&1 | tee "$logs/gpu_tensorrt.log"
exit $((tests || bench || $?))
