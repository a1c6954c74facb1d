// custom.ops::FusedGridSample and custom.ops::AffineGrid (ops/OPS.md) as OpenVINO operations.
//
// The ONNX frontend turns each custom.ops node into one of these (extension.cpp: a
// ConversionExtension per op type in the custom.ops domain); OpenVINO infers their output
// shapes with validate_and_infer_types and the CPU plugin runs them through evaluate(), which
// calls the kernels' C ABI (surgeon_kernels.h, linked from their static archive: the same code
// as surgeon_ops.kernels and the onnxruntime op library).
#pragma once

#include <stdint.h>

#include <string>
#include <vector>

#include "openvino/op/op.hpp"

namespace sk_ov {

enum class OpKind { kFusedGridSample, kAffineGrid };

// An error that is its message alone (OpenVINO's own exceptions add the source file and line).
class Error : public ov::Exception {
 public:
  explicit Error(const std::string& what) : ov::Exception(what) {}
};

// "custom.ops::FusedGridSample node 'name': ", how every error about a node starts.
std::string node_prefix(OpKind kind, const std::string& name);

// A node's attributes, as the contract names them (mode in torch's names).
struct Attrs {
  std::string mode = "bilinear";
  std::string padding_mode = "zeros";
  int64_t align_corners = 0;
  std::vector<int64_t> output_size;  // spatial; empty when the size input gives it
};

// "" when the attributes are valid for a node with (or without) the size input, else why not.
std::string check_attrs(OpKind kind, const Attrs& a, bool size_input);
int mode_code(const std::string& mode);        // the kernels' enums; the names are checked first
int padding_code(const std::string& padding);

// The output shape from the inputs' shapes (partial at compile time, static at run time) and
// the size input's values when known (nullptr: absent or not known yet).  "" or why not.
std::string infer_sample(const Attrs& a, const ov::PartialShape& x, const ov::PartialShape& theta,
                         const ov::PartialShape& size_shape, const std::vector<int64_t>* size, ov::PartialShape* y);
std::string infer_grid(const Attrs& a, const ov::PartialShape& theta,
                       const ov::PartialShape& size_shape, const std::vector<int64_t>* size, ov::PartialShape* grid);

// What both ops share: the attributes, the error prefix naming the node, the checks.
class GridOpBase : public ov::op::Op {
 public:
  GridOpBase() = default;
  GridOpBase(const ov::OutputVector& args, Attrs attrs, const std::string& name = "");
  const Attrs& attrs() const { return m_attrs; }
  virtual OpKind kind() const = 0;
  void validate_and_infer_types() override;
  bool visit_attributes(ov::AttributeVisitor& visitor) override;
  bool has_evaluate() const override { return true; }
  bool evaluate(ov::TensorVector& outputs, const ov::TensorVector& inputs) const override;

  // One line naming the node: "custom.ops::FusedGridSample node 'name': what".
  [[noreturn]] void fail(const std::string& what) const;

 protected:
  size_t size_at() const { return kind() == OpKind::kFusedGridSample ? 2 : 1; }
  bool has_size_input() const { return get_input_size() > size_at(); }
  Attrs m_attrs;
  // The ONNX node's name, kept through clones (the CPU plugin runs a clone; the frontend renames
  // the node after its output): what errors call the node.
  std::string m_name;
};

class FusedGridSample : public GridOpBase {
 public:
  OPENVINO_OP("FusedGridSample", "custom.ops");
  FusedGridSample() = default;
  FusedGridSample(const ov::OutputVector& args, Attrs attrs, const std::string& name = "")
      : GridOpBase(args, std::move(attrs), name) {
    constructor_validate_and_infer_types();
  }
  OpKind kind() const override { return OpKind::kFusedGridSample; }
  std::shared_ptr<ov::Node> clone_with_new_inputs(const ov::OutputVector& args) const override {
    return std::make_shared<FusedGridSample>(args, m_attrs, m_name);
  }
};

class AffineGrid : public GridOpBase {
 public:
  OPENVINO_OP("AffineGrid", "custom.ops");
  AffineGrid() = default;
  AffineGrid(const ov::OutputVector& args, Attrs attrs, const std::string& name = "")
      : GridOpBase(args, std::move(attrs), name) {
    constructor_validate_and_infer_types();
  }
  OpKind kind() const override { return OpKind::kAffineGrid; }
  std::shared_ptr<ov::Node> clone_with_new_inputs(const ov::OutputVector& args) const override {
    return std::make_shared<AffineGrid>(args, m_attrs, m_name);
  }
};

}  // namespace sk_ov
