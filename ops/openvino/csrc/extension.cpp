// The library's entry point (core.add_extension(path) calls create_extensions): for each op,
//  - a ConversionExtension of the ONNX frontend for op type OP in domain custom.ops: read_model
//    calls it for every such node, with the node's inputs already converted, and gets one of
//    our operations back;
//  - an OpExtension, so that OpenVINO knows the operation itself (an IR file holding it reads
//    back, and the operation can be cloned and serialised).
#include "openvino/core/extension.hpp"
#include "openvino/core/op_extension.hpp"
#include "openvino/frontend/onnx/extension/conversion.hpp"
#include "ov_ops.h"

namespace sk_ov {
namespace {

using ov::frontend::NodeContext;

// The ONNX frontend gives INT attributes as int64_t, STRING as std::string, INTS as
// std::vector<int64_t>; any other type (a FLOAT align_corners, an INT mode) is refused here,
// naming the node, rather than by ov::Any's cast with no context.
template <class T>
bool read(const NodeContext& ctx, const std::string& prefix, const char* name, const char* type, T* out) {
  const ov::Any any = ctx.get_attribute_as_any(name);
  if (any.empty()) return false;
  if (!any.is<T>()) throw Error(prefix + "attribute " + name + " must be " + type + " (ops/OPS.md)");
  *out = any.as<T>();
  return true;
}

// Inputs the node gives: an optional input skipped with the empty name "" comes as the
// frontend's NullNode placeholder, and only trailing ones can be skipped here (size).
ov::OutputVector given_inputs(const NodeContext& ctx) {
  ov::OutputVector args;
  for (size_t i = 0; i < ctx.get_input_size(); ++i) {
    ov::Output<ov::Node> in = ctx.get_input((int)i);
    if (std::string(in.get_node()->get_type_name()) == "NullNode") continue;
    args.push_back(in);
  }
  return args;
}

template <class Op>
ov::OutputVector convert(const NodeContext& ctx, OpKind kind) {
  const std::string& name = ctx.get_name();
  const std::string prefix = node_prefix(kind, name);
  Attrs a;
  if (kind == OpKind::kFusedGridSample) {
    read(ctx, prefix, "mode", "a STRING", &a.mode);
    if (a.mode == "linear") a.mode = "bilinear";  // opset-20 GridSample's names (ops/OPS.md)
    if (a.mode == "cubic") a.mode = "bicubic";
    read(ctx, prefix, "padding_mode", "a STRING", &a.padding_mode);
  }
  read(ctx, prefix, "align_corners", "an INT, 0 or 1", &a.align_corners);
  if (read(ctx, prefix, "output_size", "INTS", &a.output_size) && a.output_size.empty())
    throw Error(prefix + "output_size must have 2 values [H_out, W_out] or 3 [D_out, H_out, W_out], got 0");
  const ov::OutputVector args = given_inputs(ctx);
  return {std::make_shared<Op>(args, a, name)->output(0)};
}

}  // namespace
}  // namespace sk_ov

using sk_ov::AffineGrid;
using sk_ov::FusedGridSample;
using sk_ov::OpKind;

OPENVINO_CREATE_EXTENSIONS(std::vector<ov::Extension::Ptr>({
    std::make_shared<ov::OpExtension<FusedGridSample>>(),
    std::make_shared<ov::OpExtension<AffineGrid>>(),
    std::make_shared<ov::frontend::onnx::ConversionExtension>(
        "FusedGridSample", "custom.ops",
        [](const ov::frontend::NodeContext& ctx) {
          return sk_ov::convert<FusedGridSample>(ctx, OpKind::kFusedGridSample);
        }),
    std::make_shared<ov::frontend::onnx::ConversionExtension>(
        "AffineGrid", "custom.ops",
        [](const ov::frontend::NodeContext& ctx) { return sk_ov::convert<AffineGrid>(ctx, OpKind::kAffineGrid); }),
}));
