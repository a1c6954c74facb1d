// A run's inputs checked against each other and against the node's attributes, before any
// data is touched: every way a model or a feed can disagree gets a sentence, never an
// out-of-bounds access.
#include <sstream>

#include "ort_ops.h"
#include "surgeon_kernels.h"

namespace sk_ort {
namespace {

std::string shape_text(const std::vector<int64_t>& s) {
  std::ostringstream o;
  o << "[";
  for (size_t k = 0; k < s.size(); ++k) o << (k ? ", " : "") << s[k];
  o << "]";
  return o.str();
}

int dtype_of(ONNXTensorElementDataType t) {
  return t == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16 ? SURGEON_DTYPE_FLOAT16 : SURGEON_DTYPE_FLOAT32;
}

// The output's spatial size: the attribute, or the size input checked against batch n (and
// channels c when c >= 0).  nsp: spatial dims.
std::string spatial_out(const Attrs& a, const TensorView* size, int nsp, int64_t n, int64_t c, int64_t* out) {
  if (!a.size_input) {
    if ((int)a.output_size.size() != nsp)
      return "output_size has " + std::to_string(a.output_size.size()) + " values but the input is " +
             std::to_string(nsp) + "-D (it needs " + std::to_string(nsp) + ")";
    for (int k = 0; k < nsp; ++k) out[k] = a.output_size[(size_t)k];
    return "";
  }
  if (size == nullptr) return "the size input is missing";
  const std::string want = nsp == 2 ? "[N, C, H_out, W_out]" : "[N, C, D_out, H_out, W_out]";
  if (size->shape.size() != 1 || size->shape[0] != nsp + 2)
    return "size must be an int64 tensor of " + std::to_string(nsp + 2) + " values " + want + ", got shape " +
           shape_text(size->shape);
  const int64_t* s = (const int64_t*)size->data;
  const std::vector<int64_t> values(s, s + nsp + 2);
  if (values[0] != n)
    return "size " + shape_text(values) + " has batch " + std::to_string(values[0]) + ", the inputs have " +
           std::to_string(n);
  if (c >= 0 && values[1] != c)
    return "size " + shape_text(values) + " has " + std::to_string(values[1]) + " channels, X has " + std::to_string(c);
  for (int k = 0; k < nsp; ++k) {
    if (values[(size_t)k + 2] < 0) return "size " + shape_text(values) + " has a negative dimension";
    out[k] = values[(size_t)k + 2];
  }
  return "";
}

// The output shape, refused if its element count overflows.
std::string finish(Call* call, std::vector<int64_t> shape) {
  int64_t total = 1;
  call->empty = false;
  for (int64_t d : shape) {
    if (d == 0) call->empty = true;
    if (d != 0 && total > INT64_MAX / d) return "the output " + shape_text(shape) + " is too large";
    total *= d == 0 ? 1 : d;
  }
  call->y_shape = std::move(shape);
  return "";
}

std::string check_theta(const TensorView& theta, int nsp) {
  const std::string want = nsp == 2 ? "[N, 2, 3]" : "[N, 3, 4]";
  if (theta.shape.size() != 3 || theta.shape[1] != nsp || theta.shape[2] != nsp + 1)
    return "theta must have shape " + want + " for " + std::to_string(nsp) + "-D sampling, got " +
           shape_text(theta.shape);
  return "";
}

}  // namespace

std::string check_sample(const Attrs& a, const TensorView& x, const TensorView& theta, const TensorView* size,
                         Call* call) {
  const size_t rank = x.shape.size();
  if (rank != 4 && rank != 5)
    return "X must be 4-D [N, C, H, W] or 5-D [N, C, D, H, W], got shape " + shape_text(x.shape);
  const int nsp = (int)rank - 2;
  if (x.type != theta.type) return "theta must have X's element type";  // the op's overloads refuse it first
  std::string err = check_theta(theta, nsp);
  if (!err.empty()) return err;
  const int64_t n = x.shape[0], c = x.shape[1];
  if (theta.shape[0] != n)
    return "theta has batch " + std::to_string(theta.shape[0]) + ", X has " + std::to_string(n);
  if (nsp == 3 && a.mode == SURGEON_MODE_BICUBIC) return "bicubic mode is 2-D only (as in torch), X is 5-D";
  err = spatial_out(a, size, nsp, n, c, call->out);
  if (!err.empty()) return err;
  call->dtype = dtype_of(x.type);
  call->spatial_dims = nsp;
  call->N = n;
  call->C = c;
  std::vector<int64_t> y = {n, c};
  for (int k = 0; k < nsp; ++k) {
    call->in[k] = x.shape[(size_t)k + 2];
    y.push_back(call->out[k]);
  }
  err = finish(call, y);
  if (!err.empty() || call->empty) return err;
  for (int k = 0; k < nsp; ++k)
    if (call->in[k] < 1) return "X has an empty spatial dimension, shape " + shape_text(x.shape);
  return "";
}

std::string check_grid(const Attrs& a, const TensorView& theta, const TensorView* size, Call* call) {
  const int nsp = theta.shape.size() == 3 && theta.shape[1] == 3 ? 3 : 2;
  std::string err = check_theta(theta, nsp);
  if (!err.empty()) return "theta must have shape [N, 2, 3] or [N, 3, 4], got " + shape_text(theta.shape);
  const int64_t n = theta.shape[0];
  err = spatial_out(a, size, nsp, n, -1, call->out);
  if (!err.empty()) return err;
  call->dtype = dtype_of(theta.type);
  call->spatial_dims = nsp;
  call->N = n;
  std::vector<int64_t> g = {n};
  for (int k = 0; k < nsp; ++k) g.push_back(call->out[k]);
  g.push_back(nsp);
  return finish(call, g);
}

}  // namespace sk_ort
