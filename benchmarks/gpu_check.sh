#!/usr/bin/env bash
# The checks that need a GPU, as one script for a lent GPU machine (see README: Benchmarks).
# That machine's image already has torch (CUDA), onnx, onnxruntime, cv2, pytest and nvcc, so
# the repository runs from source, uninstalled.  Logs go to $OUT when set (the device tool
# brings them back), else to /tmp.
set -o pipefail
cd "$(dirname "$0")/.."
logs=${OUT:-/tmp}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 SURGEON_CACHE_DIR=${SURGEON_CACHE_DIR:-/tmp/surgeon-cache}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -m pytest -q -p no:cacheprovider -rs tests/kernels/test_cuda.py tests/kernels/test_precision.py \
    tests/kernels/test_build.py 2>&1 | tee "$logs/gpu_tests.log"
tests=$?
python3 benchmarks/kernels.py --gpu-only 2>&1 | tee "$logs/gpu_bench.log"
exit $((tests || $?))
