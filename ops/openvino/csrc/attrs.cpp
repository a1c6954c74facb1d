// The attributes' rules (ops/OPS.md), checked when a node is made: from the ONNX file
// (extension.cpp), or from an IR file or a clone (validate_and_infer_types).
#include "ov_ops.h"
#include "surgeon_kernels.h"

namespace sk_ov {

std::string node_prefix(OpKind kind, const std::string& name) {
  return std::string("custom.ops::") + (kind == OpKind::kFusedGridSample ? "FusedGridSample" : "AffineGrid") +
         " node '" + name + "': ";
}

int mode_code(const std::string& mode) {
  return mode == "nearest" ? SURGEON_MODE_NEAREST : mode == "bicubic" ? SURGEON_MODE_BICUBIC : SURGEON_MODE_BILINEAR;
}

int padding_code(const std::string& padding) {
  return padding == "border" ? SURGEON_PADDING_BORDER
                             : padding == "reflection" ? SURGEON_PADDING_REFLECTION : SURGEON_PADDING_ZEROS;
}

std::string check_attrs(OpKind kind, const Attrs& a, bool size_input) {
  if (kind == OpKind::kFusedGridSample) {
    if (a.mode != "bilinear" && a.mode != "nearest" && a.mode != "bicubic")
      return "unknown mode '" + a.mode + "'; expected bilinear, nearest or bicubic (opset-20 linear, cubic)";
    if (a.padding_mode != "zeros" && a.padding_mode != "border" && a.padding_mode != "reflection")
      return "unknown padding_mode '" + a.padding_mode + "'; expected zeros, border or reflection";
  }
  if (a.align_corners != 0 && a.align_corners != 1)
    return "align_corners must be 0 or 1, got " + std::to_string(a.align_corners);
  const bool has_attr = !a.output_size.empty();
  if (has_attr == size_input)
    return std::string(has_attr ? "has both an output_size attribute and a size input"
                                : "has neither an output_size attribute nor a size input") +
           "; exactly one gives the output size (ops/OPS.md)";
  if (has_attr) {
    const size_t n = a.output_size.size();
    if (n != 2 && n != 3)
      return "output_size must have 2 values [H_out, W_out] or 3 [D_out, H_out, W_out], got " + std::to_string(n);
    for (int64_t v : a.output_size)
      if (v < 0) return "output_size must not be negative, got " + std::to_string(v);
    if (kind == OpKind::kFusedGridSample && n == 3 && a.mode == "bicubic") return "bicubic mode is 2-D only (as in torch)";
  }
  return "";
}

}  // namespace sk_ov
