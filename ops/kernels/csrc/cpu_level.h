// What each instruction-set level of the CPU kernels offers the ABI (cpu_kernels.cpp, compiled
// once for the baseline): tables of plain functions, outside the per-level namespaces (isa.h).
// cpu_fast.cpp and cpu_locations.cpp define one table each per level they are compiled for;
// cpu_isa.cpp picks the level.  Arguments are the C ABI's, already checked.
#pragma once

#include <stdint.h>

#include "surgeon_kernels.h"

namespace sk {
namespace levels {  // not sk::cpu: that name belongs to the per-level namespaces

// Who runs a call's tasks: an engine's pool (pool != nullptr) or the library's own; threads
// is how many may work on it (1: the caller alone).  How work is split never changes a result.
struct Workers {
  int threads;
  const surgeon_cpu_executor* pool;
};

// The fast paths, float32 and float16 (cpu_fast.cpp); callers check fits_int32 on the input.
struct FastPaths {
  void (*sample)(bool from_theta, int dtype, int spatial_dims, const void* x, const void* coords, void* y,
                 int64_t N, int64_t C, const int64_t* in, const int64_t* out, int64_t coord_batch, int mode,
                 int pad, int ac, Workers workers);
};

// Every output location through locations.h (huge images, the testing hook), and the
// affine grid itself (cpu_locations.cpp).
struct LocationPaths {
  void (*sample)(bool from_theta, int dtype, int spatial_dims, const void* x, const void* coords, void* y,
                 int64_t N, int64_t C, const int64_t* in, const int64_t* out, int64_t coord_batch, int mode,
                 int pad, int ac, Workers workers);
  void (*affine_grid)(bool per_location, int dtype, int spatial_dims, const void* theta, void* grid, int64_t N,
                      const int64_t* out, int ac, Workers workers);
};

struct Level {
  const char* name;  // as -march spells it
  const FastPaths* fast;
  const LocationPaths* locations;
};

// The tables, named by level (SK_LEVEL_TABLE below gives a file its own); build.py compiles
// the ones cpu_isa.cpp names.
extern const FastPaths fast_paths_x86_64, fast_paths_x86_64_v3, fast_paths_x86_64_v4, fast_paths_generic;
extern const LocationPaths location_paths_x86_64, location_paths_x86_64_v3, location_paths_generic;

// The level the launchers run (cpu_isa.cpp): chosen at the first call, then fixed.
const Level& active_level();

}  // namespace levels
}  // namespace sk

#define SK_LEVEL_PASTE2(a, b) a##_##b
#define SK_LEVEL_PASTE(a, b) SK_LEVEL_PASTE2(a, b)
#define SK_LEVEL_TABLE(what) SK_LEVEL_PASTE(what, SK_ISA)  // e.g. fast_paths_x86_64_v3
