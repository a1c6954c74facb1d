// The two operations: attributes, output types and shapes, and evaluate() on the kernels.
//
// The CPU plugin runs an operation it has no kernel of its own for through evaluate(), on the
// thread of the stream that runs the model; the kernels' work is spread with TBB inside that
// stream's arena, so a model compiled for one thread (INFERENCE_NUM_THREADS) runs them on one.
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "openvino/op/constant.hpp"
#include "ov_ops.h"
#include "surgeon_kernels.h"

namespace sk_ov {
namespace {

int tbb_parallel_for(void*, size_t n_tasks, void (*task)(void*, size_t), void* task_ctx) {
  try {
    tbb::parallel_for(size_t(0), n_tasks, [&](size_t i) { task(task_ctx, i); });
  } catch (...) {
    return 1;
  }
  return 0;
}

std::string type_text(const ov::element::Type& t) {
  return t == ov::element::f32 ? "float32" : t == ov::element::f16 ? "float16" : t.get_type_name();
}

bool float_type(const ov::element::Type& t) {
  return t == ov::element::f32 || t == ov::element::f16 || t.is_dynamic();
}

int dtype_of(const ov::element::Type& t) { return t == ov::element::f16 ? SURGEON_DTYPE_FLOAT16 : SURGEON_DTYPE_FLOAT32; }

// The size input's values at run time (OpenVINO may hand int64 over as int32).
std::vector<int64_t> read_size(const ov::Tensor& t) {
  std::vector<int64_t> v(t.get_size());
  for (size_t k = 0; k < v.size(); ++k)
    v[k] = t.get_element_type() == ov::element::i32 ? t.data<const int32_t>()[k] : t.data<const int64_t>()[k];
  return v;
}

}  // namespace

GridOpBase::GridOpBase(const ov::OutputVector& args, Attrs attrs, const std::string& name)
    : ov::op::Op(args), m_attrs(std::move(attrs)), m_name(name) {}

void GridOpBase::fail(const std::string& what) const {
  throw Error(node_prefix(kind(), m_name.empty() ? get_friendly_name() : m_name) + what);
}

bool GridOpBase::visit_attributes(ov::AttributeVisitor& visitor) {
  if (kind() == OpKind::kFusedGridSample) {
    visitor.on_attribute("mode", m_attrs.mode);
    visitor.on_attribute("padding_mode", m_attrs.padding_mode);
  }
  visitor.on_attribute("align_corners", m_attrs.align_corners);
  visitor.on_attribute("output_size", m_attrs.output_size);
  return true;
}

void GridOpBase::validate_and_infer_types() {
  const bool fused = kind() == OpKind::kFusedGridSample;
  const bool size_input = has_size_input();
  if (get_input_size() < size_at() || get_input_size() > size_at() + 1)
    fail("takes " + std::string(fused ? "2 or 3 inputs (X, theta[, size])" : "1 or 2 inputs (theta[, size])") +
         ", got " + std::to_string(get_input_size()));
  std::string err = check_attrs(kind(), m_attrs, size_input);
  if (!err.empty()) fail(err);

  const ov::element::Type type = get_input_element_type(0);
  if (!float_type(type)) fail(std::string(fused ? "X" : "theta") + " must be float32 or float16, got " + type_text(type));
  if (fused && !get_input_element_type(1).compatible(type))
    fail("theta is " + type_text(get_input_element_type(1)) + " but X is " + type_text(type) +
         "; theta must have X's element type (ops/OPS.md)");
  ov::PartialShape size_shape = ov::PartialShape::dynamic();
  std::vector<int64_t> values;
  bool have_values = false;
  if (size_input) {
    const ov::element::Type st = get_input_element_type(size_at());
    if (!st.is_dynamic() && st != ov::element::i64 && st != ov::element::i32)
      fail("size must be int64, got " + type_text(st));
    set_input_is_relevant_to_shape(size_at());
    size_shape = get_input_partial_shape(size_at());
    // A constant size (as written, or folded from static shapes) gives static output dims.
    if (auto c = ov::as_type_ptr<ov::op::v0::Constant>(input_value(size_at()).get_node_shared_ptr())) {
      values = c->cast_vector<int64_t>();
      have_values = true;
    }
  }
  ov::PartialShape out;
  err = fused ? infer_sample(m_attrs, get_input_partial_shape(0), get_input_partial_shape(1), size_shape,
                             have_values ? &values : nullptr, &out)
              : infer_grid(m_attrs, get_input_partial_shape(0), size_shape, have_values ? &values : nullptr, &out);
  if (!err.empty()) fail(err);
  set_output_type(0, type, out);
}

bool GridOpBase::evaluate(ov::TensorVector& outputs, const ov::TensorVector& inputs) const {
  const bool fused = kind() == OpKind::kFusedGridSample;
  const ov::Tensor& first = inputs[0];
  const ov::Tensor& theta = fused ? inputs[1] : inputs[0];
  const bool size_input = inputs.size() > size_at();
  std::vector<int64_t> values;
  ov::PartialShape size_shape = ov::PartialShape::dynamic();
  if (size_input) {
    values = read_size(inputs[size_at()]);
    size_shape = inputs[size_at()].get_shape();
  }
  ov::PartialShape out;
  const std::string err =
      fused ? infer_sample(m_attrs, first.get_shape(), theta.get_shape(), size_shape, size_input ? &values : nullptr, &out)
            : infer_grid(m_attrs, theta.get_shape(), size_shape, size_input ? &values : nullptr, &out);
  if (!err.empty()) fail(err);
  if (theta.get_element_type() != first.get_element_type()) fail("theta must have X's element type (ops/OPS.md)");
  if (!float_type(first.get_element_type()))
    fail("runs on float32 or float16 data, got " + type_text(first.get_element_type()));
  const ov::Shape y_shape = out.to_shape();
  outputs[0].set_shape(y_shape);
  if (outputs[0].get_shape() != y_shape || outputs[0].get_element_type() != first.get_element_type())
    fail("OpenVINO gave an output tensor " + type_text(outputs[0].get_element_type()) +
         ov::PartialShape(outputs[0].get_shape()).to_string() + " for " + out.to_string());  // never written past
  if (ov::shape_size(y_shape) == 0) return true;  // nothing to compute

  const ov::Shape& in = first.get_shape();
  const int nsp = (int)(fused ? in.size() - 2 : y_shape.size() - 2);
  int64_t in_size[3] = {1, 1, 1}, out_size[3] = {1, 1, 1};
  for (int k = 0; k < nsp; ++k) {
    out_size[k] = (int64_t)y_shape[(size_t)k + (fused ? 2 : 1)];
    if (fused) {
      in_size[k] = (int64_t)in[(size_t)k + 2];
      if (in_size[k] < 1) fail("X has an empty spatial dimension, shape " + ov::PartialShape(in).to_string());
    }
  }
  const surgeon_cpu_executor pool{tbb_parallel_for, nullptr, tbb::this_task_arena::max_concurrency()};
  const int dtype = dtype_of(first.get_element_type());
  const int64_t n = (int64_t)y_shape[0];
  const int rc = fused ? surgeon_fused_grid_sample_cpu_ex(dtype, nsp, first.data(), theta.data(), outputs[0].data(), n,
                                                          (int64_t)y_shape[1], in_size, out_size, n,
                                                          mode_code(m_attrs.mode), padding_code(m_attrs.padding_mode),
                                                          (int)m_attrs.align_corners, &pool)
                       : surgeon_affine_grid_cpu_ex(dtype, nsp, theta.data(), outputs[0].data(), n, out_size,
                                                    (int)m_attrs.align_corners, &pool);
  if (rc != SURGEON_OK) fail(std::string("the kernel failed: ") + surgeon_kernels_error_string(rc));
  return true;
}

}  // namespace sk_ov
