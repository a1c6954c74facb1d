#!/usr/bin/env bash
# Builds run_fused.cpp against the onnxruntime wheel's own shared library.  The wheel ships
# libonnxruntime.so.1.N only: the names the linker (libonnxruntime.so) and the loader
# (libonnxruntime.so.1, its soname) look for are made as links in OUT_DIR, never in site-packages.
# The C++ API headers: $ONNXRUNTIME_INCLUDE_DIR, else the ones the install fetched (cmake/ort_headers.py).
#   samples/cpp/build.sh OUT_DIR      # -> OUT_DIR/run_fused
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)
python=${PYTHON:-python3}
capi=$("$python" -c "import onnxruntime, os; print(os.path.join(os.path.dirname(onnxruntime.__file__), 'capi'))")
lib=$(ls "$capi"/libonnxruntime.so.1.* | head -1)
include=${ONNXRUNTIME_INCLUDE_DIR:-$("$python" "$here/../../cmake/ort_headers.py" --fallback "$out" | sed -n 1p)}
ln -sf "$lib" "$out/libonnxruntime.so"
ln -sf "$lib" "$out/libonnxruntime.so.1"
${CXX:-g++} -std=c++17 -O2 -I "$include" "$here/run_fused.cpp" -L "$out" -lonnxruntime -Wl,-rpath,"$out" \
    -o "$out/run_fused"
