// Argument checks and error strings shared by the CPU and CUDA launchers, so both libraries
// refuse the same calls with the same codes.
#pragma once

#include "isa.h"

#include <stdint.h>

#include "surgeon_kernels.h"

namespace sk {
SK_ISA_BEGIN

inline bool sizes_ok(int spatial_dims, const int64_t* size) {
  if (size == nullptr) return false;
  for (int k = 0; k < spatial_dims; ++k)
    if (size[k] < 1) return false;
  return true;
}

// Checks common to every launcher; mode/padding only when has_sampling.
inline int check_common(int dtype, int spatial_dims, int64_t N, const int64_t* out_size,
                        int align_corners) {
  if (dtype != SURGEON_DTYPE_FLOAT32 && dtype != SURGEON_DTYPE_FLOAT16) return SURGEON_ERR_INVALID_ARGUMENT;
  if (spatial_dims != 2 && spatial_dims != 3) return SURGEON_ERR_INVALID_ARGUMENT;
  if (N < 1 || !sizes_ok(spatial_dims, out_size)) return SURGEON_ERR_INVALID_ARGUMENT;
  if (align_corners != 0 && align_corners != 1) return SURGEON_ERR_INVALID_ARGUMENT;
  return SURGEON_OK;
}

inline int check_sampling(int dtype, int spatial_dims, const void* x, const void* coords, void* y,
                          int64_t N, int64_t C, const int64_t* in_size, const int64_t* out_size,
                          int64_t coord_batch, int mode, int padding_mode, int align_corners) {
  const int rc = check_common(dtype, spatial_dims, N, out_size, align_corners);
  if (rc != SURGEON_OK) return rc;
  if (x == nullptr || coords == nullptr || y == nullptr) return SURGEON_ERR_INVALID_ARGUMENT;
  if (C < 1 || !sizes_ok(spatial_dims, in_size)) return SURGEON_ERR_INVALID_ARGUMENT;
  if (coord_batch != N && coord_batch != 1) return SURGEON_ERR_INVALID_ARGUMENT;
  if (mode < SURGEON_MODE_BILINEAR || mode > SURGEON_MODE_BICUBIC) return SURGEON_ERR_INVALID_ARGUMENT;
  if (padding_mode < SURGEON_PADDING_ZEROS || padding_mode > SURGEON_PADDING_REFLECTION)
    return SURGEON_ERR_INVALID_ARGUMENT;
  if (spatial_dims == 3 && mode == SURGEON_MODE_BICUBIC) return SURGEON_ERR_UNSUPPORTED;
  return SURGEON_OK;
}

// Runs fn() (returning a code), turning any C++ exception into SURGEON_ERR_INTERNAL: none may
// cross the C ABI.
template <typename Fn>
inline int guarded(const Fn& fn) {
  try {
    return fn();
  } catch (...) {
    return SURGEON_ERR_INTERNAL;
  }
}

inline const char* error_string(int code) {
  switch (code) {
    case SURGEON_OK: return "ok";
    case SURGEON_ERR_INVALID_ARGUMENT: return "invalid argument (dtype, dims, sizes, batch, mode or padding)";
    case SURGEON_ERR_UNSUPPORTED: return "unsupported combination (bicubic is 2-D only)";
    case SURGEON_ERR_INTERNAL: return "internal error (out of memory?)";
    default: return code >= SURGEON_ERR_CUDA_BASE ? "CUDA error" : "unknown error";
  }
}

SK_ISA_END
}  // namespace sk
