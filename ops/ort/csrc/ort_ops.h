// custom.ops::FusedGridSample and custom.ops::AffineGrid (ops/OPS.md) as onnxruntime custom ops.
//
// Written against onnxruntime's C API only (no C++ wrapper, no exceptions across it): the
// library gets the API table in RegisterCustomOps and links nothing of onnxruntime.  The
// sampling itself is the kernels' C ABI (surgeon_kernels.h), linked from their static archive:
// the same code as surgeon_ops.kernels, no second copy of the math.
#pragma once

#include <stdint.h>

#include <string>
#include <vector>

#include "onnxruntime_c_api.h"

namespace sk_ort {

enum class OpKind { kFusedGridSample, kAffineGrid };
enum class Device { kCpu, kCuda };

// A node's attributes, read and checked when its kernel is created (attrs.cpp).
struct Attrs {
  int mode = 0, padding = 0, align_corners = 0;  // the ABI's enums
  std::vector<int64_t> output_size;              // spatial; empty when the size input gives it
  bool size_input = false;                       // the node names an optional size input
};

// A tensor as a run sees it.
struct TensorView {
  ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  std::vector<int64_t> shape;
  const void* data = nullptr;
};

// One run's sizes, checked (shapes.cpp).
struct Call {
  int dtype = 0, spatial_dims = 0;  // the ABI's dtype; 2 or 3
  int64_t N = 0, C = 0, in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  std::vector<int64_t> y_shape;  // the output's
  bool empty = false;            // a dimension is 0: nothing to compute
};

// "" when fine, else what is wrong (one sentence).
std::string read_attrs(const OrtApi* api, const OrtKernelInfo* info, OpKind kind, Attrs* attrs);
std::string check_sample(const Attrs& a, const TensorView& x, const TensorView& theta, const TensorView* size,
                         Call* call);
std::string check_grid(const Attrs& a, const TensorView& theta, const TensorView* size, Call* call);

// How a device runs the kernels: each returns a code of surgeon_kernels.h.
struct Launcher {
  int (*sample)(const OrtApi* api, OrtKernelContext* ctx, const Call& c, const Attrs& a, const void* x,
                const void* theta, void* y);
  int (*grid)(const OrtApi* api, OrtKernelContext* ctx, const Call& c, const Attrs& a, const void* theta, void* grid);
  const char* (*error_string)(int code);
};
extern const Launcher kCpuLauncher;   // launch_cpu.cpp
extern const Launcher kCudaLauncher;  // launch_cuda.cpp (the CUDA library only)

// Adds every op of `device` (each element type an overload) to the domain (op.cpp).
OrtStatus* add_ops(const OrtApi* api, OrtCustomOpDomain* domain, Device device);

}  // namespace sk_ort
