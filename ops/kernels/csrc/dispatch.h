// Runtime dtype / mode / padding -> compile-time types and constants, shared by the CPU and
// CUDA launchers so both instantiate exactly the same specialisations.
#pragma once

#include "isa.h"

#include <type_traits>

#include "grid_sample_math.h"
#include "surgeon_kernels.h"

namespace sk {
SK_ISA_BEGIN

template <int V>
using IC = std::integral_constant<int, V>;

// Returns f(T{}) with T the element type of the ABI's dtype code (checked beforehand).
template <typename F>
auto with_dtype(int dtype, const F& f) {
  return dtype == SURGEON_DTYPE_FLOAT16 ? f(half_t{}) : f(float{});
}

// Calls f(IC<MODE>, IC<PAD>) for the runtime mode / padding (3-D never asks for bicubic).
template <bool kAllowBicubic, typename F>
void with_mode_pad(int mode, int pad, const F& f) {
  auto with_pad = [&](auto m) {
    if (pad == kZeros) f(m, IC<kZeros>{});
    else if (pad == kBorder) f(m, IC<kBorder>{});
    else f(m, IC<kReflection>{});
  };
  if (mode == kNearest) with_pad(IC<kNearest>{});
  else if (kAllowBicubic && mode == kBicubic) with_pad(IC<kBicubic>{});
  else with_pad(IC<kBilinear>{});
}

SK_ISA_END
}  // namespace sk
