"""The shared math's reflection (grid_sample_math.h: reflect_coord, and pad_near and
reflect_inside, which the CPU's vector loops use) against the fmodf form it replaced, bit for
bit: around every multiple of the half period, at random magnitudes, and far away (where
reflect_coord falls back to fmodf), for many sizes, both align_corners.  Compiled here, at the
baseline and with FMA."""

import subprocess

import pytest

from .. import toolchain

PROGRAM = r"""
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>
#include "grid_sample_math.h"
static float by_fmodf(float c, long tl, long th) {  // reflect_coord before the fold
  if (tl == th) return 0.0f;
  const float lo = (float)tl / 2.0f, span = (float)(th - tl) / 2.0f;
  c = fabsf(c - lo);
  const float extra = fmodf(c, span), flips = floorf(c / span);
  return (fmodf(flips, 2.0f) == 0.0f) ? extra + lo : span - extra + lo;
}
int main() {
  std::mt19937_64 rng(1);
  long bad = 0, n = 0, inside_n = 0;
  auto same = [](float a, float b) { return memcmp(&a, &b, 4) == 0 || (a != a && b != b); };
  auto check = [&](float c, long size, int ac) {
    const long tl = ac ? 0 : -1, th = ac ? 2 * (size - 1) : 2 * size - 1;
    ++n;
    bad += !same(sk::reflect_coord(c, tl, th), by_fmodf(c, tl, th));
    if (fabsf(c) < sk::kNearCoord)
      bad += !same(sk::pad_near<sk::kReflection>(c, size, ac), sk::pad_coord<sk::kReflection>(c, size, ac));
    bool inside;
    const float unfolded = sk::reflect_inside(c, size, ac, inside);
    if (inside) bad += !same(unfolded, sk::pad_coord<sk::kReflection>(c, size, ac)), ++inside_n;
  };
  std::vector<long> sizes;
  for (long s = 1; s <= 40; ++s) sizes.push_back(s);
  for (int k = 0; k < 30; ++k) sizes.push_back(1 + (long)(rng() % (1u << (2 + k % 20))));
  for (long size : sizes)
    for (int ac = 0; ac < 2; ++ac) {
      const float span = ac ? (float)(size - 1) : (float)size;
      for (long k = 0; k < 600; ++k)  // around multiples of the half period, near and far
        for (float base : {k * span * 0.5f, (float)(k * k * 37) * span * 0.5f}) {
          float v = base;
          for (int d = 0; d < 3; ++d) v = nextafterf(v, -INFINITY);
          for (int d = 0; d < 7; ++d, v = nextafterf(v, INFINITY)) {
            check(v, size, ac);
            check(-v, size, ac);
            check(v - 0.5f, size, ac);
          }
        }
      for (int k = 0; k < 3000; ++k) {  // random magnitudes up to 2^55
        uint32_t u = ((uint32_t)rng() & 0x807fffffu) | ((uint32_t)(100 + rng() % 55) << 23);
        float v;
        memcpy(&v, &u, 4);
        check(v, size, ac);
      }
    }
  printf("%ld %ld %ld\n", bad, n, inside_n);
}
"""


@pytest.mark.parametrize("flags", [[], ["-mfma"]], ids=["baseline", "fma"])
def test_fold_gives_fmodfs_bits(tmp_path, flags):
    try:
        cxx = toolchain.find_cxx()
    except toolchain.ToolMissing as exc:
        pytest.skip(str(exc))
    flags = flags if toolchain.X86 else []
    src, exe = tmp_path / "fold.cpp", tmp_path / "fold"
    src.write_text(PROGRAM)
    subprocess.run([cxx, "-O2", "-std=c++17", *toolchain.KERNEL_FLAGS, *flags, "-I", str(toolchain.CSRC), "-o", str(exe),
                    str(src)], check=True)
    bad, n, inside = map(int, subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split())
    assert n > 1_000_000 and inside > 100_000 and bad == 0, f"{bad} of {n} differ ({inside} inside the image)"
