// Picks the instruction-set level the CPU kernels run, once: the widest the CPU and the OS
// support (__builtin_cpu_supports checks the OS saves the vector registers too), or the one
// $SURGEON_CPU_LEVEL names if this CPU has it (testing the narrower paths on a wide machine).
// The levels here must be the ones build.py compiles (CPU_LEVELS).
#include <stdlib.h>
#include <string.h>

#include "cpu_level.h"

namespace sk {
namespace levels {
namespace {

#if defined(__x86_64__) || defined(_M_X64)
// Widest first.  AVX-512 changes nothing in the per-location code, so v4 shares v3's.
const Level kLevels[] = {
    {"x86-64-v4", &fast_paths_x86_64_v4, &location_paths_x86_64_v3},
    {"x86-64-v3", &fast_paths_x86_64_v3, &location_paths_x86_64_v3},
    {"x86-64", &fast_paths_x86_64, &location_paths_x86_64},
};

// (__builtin_cpu_supports takes string literals only.)
bool has_v3() {
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
  return __builtin_cpu_supports("x86-64-v3") > 0;
#else  // older compilers name features only; these imply the rest of the level on real CPUs
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi") &&
         __builtin_cpu_supports("bmi2");
#endif
}

bool has_v4() {
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
  return __builtin_cpu_supports("x86-64-v4") > 0;
#else
  return has_v3() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
#endif
}

bool supported(const Level& level) {
  __builtin_cpu_init();
  if (strcmp(level.name, "x86-64-v4") == 0) return has_v4();
  if (strcmp(level.name, "x86-64-v3") == 0) return has_v3();
  return true;  // the baseline
}
#else
const Level kLevels[] = {{"generic", &fast_paths_generic, &location_paths_generic}};

bool supported(const Level&) { return true; }
#endif

const Level* choose() {
  const char* wanted = getenv("SURGEON_CPU_LEVEL");
  const Level* widest = nullptr;
  for (const Level& level : kLevels) {
    if (!supported(level)) continue;
    if (widest == nullptr) widest = &level;
    if (wanted != nullptr && strcmp(wanted, level.name) == 0) return &level;
  }
  return widest;  // unset, unknown, or more than this CPU has: surgeon_cpu_level() tells
}

}  // namespace

const Level& active_level() {
  static const Level* const level = choose();  // thread-safe, once
  return *level;
}

}  // namespace levels
}  // namespace sk
