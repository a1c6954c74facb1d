"""The header's software float16 conversions (used where neither F16C nor CUDA is there,
e.g. aarch64) against numpy's, compiled here without F16C."""

import subprocess

import numpy as np
import pytest

from .. import toolchain

PROGRAM = r"""
#include <cstdio>
#include <vector>
#include "grid_sample_math.h"
int main() {
  std::vector<float> from_half(65536);
  for (unsigned h = 0; h < 65536; ++h) from_half[h] = sk::half_bits_to_float_sw((uint16_t)h);
  std::vector<uint16_t> to_half;
  for (uint64_t u = 0; u < (1ull << 32); u += 4093) to_half.push_back(sk::float_to_half_bits_sw(sk::bits_as_float((uint32_t)u)));
  for (uint32_t e = 100; e < 145; ++e)  // around every rounding boundary of normal halves
    for (uint32_t m = 0; m < 64; ++m) {
      const uint32_t u = (e << 23) | (0xfffu + m - 32);
      to_half.push_back(sk::float_to_half_bits_sw(sk::bits_as_float(u)));
      to_half.push_back(sk::float_to_half_bits_sw(sk::bits_as_float(u | 0x80000000u)));
    }
  fwrite(from_half.data(), 4, from_half.size(), stdout);
  fwrite(to_half.data(), 2, to_half.size(), stdout);
}
"""


def test_software_half_conversions_match_numpy(tmp_path):
    try:
        cxx = toolchain.find_cxx()
    except toolchain.ToolMissing as exc:
        pytest.skip(str(exc))
    src, exe = tmp_path / "half.cpp", tmp_path / "half"
    src.write_text(PROGRAM)
    no_f16c = ["-mno-f16c"] if toolchain.X86 else []  # elsewhere there is none to turn off
    subprocess.run([cxx, "-O1", "-std=c++17", *no_f16c, "-I", str(toolchain.CSRC), "-o", str(exe), str(src)], check=True)
    out = subprocess.run([str(exe)], capture_output=True, check=True).stdout
    from_half = np.frombuffer(out[:65536 * 4], np.float32)
    np.testing.assert_array_equal(from_half, np.arange(65536, dtype=np.uint16).view(np.float16).astype(np.float32))
    inputs = list(range(0, 1 << 32, 4093))
    for e in range(100, 145):
        for m in range(64):
            u = (e << 23) | (0xFFF + m - 32)
            inputs += [u, u | 0x80000000]
    floats = np.array(inputs, np.uint32).view(np.float32)
    got = np.frombuffer(out[65536 * 4:], np.uint16)
    with np.errstate(over="ignore", invalid="ignore"):
        want = floats.astype(np.float16).view(np.uint16)
    nan = np.isnan(floats)
    np.testing.assert_array_equal(got[~nan], want[~nan])
    assert np.isnan(got[nan].view(np.float16)).all()
