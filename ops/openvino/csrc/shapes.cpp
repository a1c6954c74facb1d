// Output shapes from input shapes, partial or static: OpenVINO asks at compile time (dims may
// be unknown, the size input's values too) and evaluate() again at run time with every shape
// and value known.  Whatever the model or a feed gets wrong is one sentence, never an
// out-of-bounds access.
#include "ov_ops.h"

namespace sk_ov {
namespace {

using ov::Dimension;
using ov::PartialShape;

std::string text(const PartialShape& s) { return s.to_string(); }

std::string values_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t k = 0; k < v.size(); ++k) s += (k ? "," : "") + std::to_string(v[k]);
  return s + "]";
}

bool known(const PartialShape& s, size_t i) { return s.rank().is_static() && s[i].is_static(); }

// Spatial dims (2 or 3) from the attribute or the size input's length when X and theta do not
// tell them; 0: nothing does yet (a wrong length is reported once the inputs are known).
int64_t spatial_from(const Attrs& a, const PartialShape& size_shape) {
  int64_t nsp = 0;
  if (!a.output_size.empty())
    nsp = (int64_t)a.output_size.size();
  else if (size_shape.rank().is_static() && size_shape.size() == 1 && size_shape[0].is_static())
    nsp = size_shape[0].get_length() - 2;
  return nsp == 2 || nsp == 3 ? nsp : 0;
}

std::string check_theta(const PartialShape& theta, int64_t nsp) {
  if (theta.rank().is_dynamic()) return "";
  if (theta.size() != 3 || !theta[1].compatible(nsp) || !theta[2].compatible(nsp + 1))
    return std::string("theta must have shape ") + (nsp == 2 ? "[N, 2, 3]" : "[N, 3, 4]") + " for " +
           std::to_string(nsp) + "-D sampling, got " + text(theta);
  return "";
}

// The output's spatial dims: the attribute, the size input's values (checked against the batch
// n and, for c not null, the channels), or unknown.
std::string spatial_out(const Attrs& a, const PartialShape& size_shape, const std::vector<int64_t>* size, int64_t nsp,
                        Dimension& n, Dimension* c, std::vector<Dimension>* out) {
  const std::string want = nsp == 2 ? "[N, C, H_out, W_out]" : "[N, C, D_out, H_out, W_out]";
  if (!a.output_size.empty()) {
    if ((int64_t)a.output_size.size() != nsp)
      return "output_size has " + std::to_string(a.output_size.size()) + " values but the input is " +
             std::to_string(nsp) + "-D (it needs " + std::to_string(nsp) + ")";
    for (int64_t v : a.output_size) out->push_back(v);
    return "";
  }
  if (size_shape.rank().is_static() && (size_shape.size() != 1 || !size_shape[0].compatible(nsp + 2)))
    return "size must be an int64 tensor of " + std::to_string(nsp + 2) + " values " + want + ", got shape " +
           text(size_shape);
  if (size == nullptr) {
    out->insert(out->end(), (size_t)nsp, Dimension::dynamic());
    return "";
  }
  const std::vector<int64_t>& v = *size;
  if ((int64_t)v.size() != nsp + 2)
    return "size must be an int64 tensor of " + std::to_string(nsp + 2) + " values " + want + ", got " +
           std::to_string(v.size());
  if (!Dimension::merge(n, n, v[0]))  // the size's batch and channels refine dims the inputs leave open
    return "size " + values_text(v) + " has batch " + std::to_string(v[0]) + ", the inputs have " + n.to_string();
  if (c != nullptr && !Dimension::merge(*c, *c, v[1]))
    return "size " + values_text(v) + " has " + std::to_string(v[1]) + " channels, X has " + c->to_string();
  for (int64_t k = 0; k < nsp; ++k) {
    if (v[(size_t)k + 2] < 0) return "size " + values_text(v) + " has a negative dimension";
    out->push_back(v[(size_t)k + 2]);
  }
  return "";
}

}  // namespace

std::string infer_sample(const Attrs& a, const PartialShape& x, const PartialShape& theta,
                         const PartialShape& size_shape, const std::vector<int64_t>* size, PartialShape* y) {
  int64_t nsp = 0;
  if (x.rank().is_static()) {
    if (x.size() != 4 && x.size() != 5)
      return "X must be 4-D [N, C, H, W] or 5-D [N, C, D, H, W], got shape " + text(x);
    nsp = (int64_t)x.size() - 2;
  } else if (known(theta, 1) && theta.size() == 3) {
    nsp = theta[1].get_length();
  } else {
    nsp = spatial_from(a, size_shape);
  }
  if (nsp != 2 && nsp != 3) {
    if (nsp != 0) return "theta must have shape [N, 2, 3] or [N, 3, 4], got " + text(theta);
    *y = PartialShape::dynamic();
    return "";
  }
  std::string err = check_theta(theta, nsp);
  if (!err.empty()) return err;
  Dimension n = x.rank().is_static() ? x[0] : Dimension::dynamic();
  const Dimension theta_n = theta.rank().is_static() ? theta[0] : Dimension::dynamic();
  if (!Dimension::merge(n, n, theta_n))
    return "theta has batch " + theta_n.to_string() + ", X has " + x[0].to_string();
  if (nsp == 3 && a.mode == "bicubic") return "bicubic mode is 2-D only (as in torch), X is 5-D";
  Dimension c = x.rank().is_static() ? x[1] : Dimension::dynamic();
  std::vector<Dimension> spatial;
  err = spatial_out(a, size_shape, size, nsp, n, &c, &spatial);
  if (!err.empty()) return err;
  spatial.insert(spatial.begin(), {n, c});
  *y = PartialShape(spatial);
  return "";
}

std::string infer_grid(const Attrs& a, const PartialShape& theta, const PartialShape& size_shape,
                       const std::vector<int64_t>* size, PartialShape* grid) {
  if (theta.rank().is_static() && theta.size() != 3)
    return "theta must have shape [N, 2, 3] or [N, 3, 4], got " + text(theta);
  int64_t nsp = known(theta, 1) ? theta[1].get_length() : spatial_from(a, size_shape);
  if (nsp != 2 && nsp != 3) {
    if (nsp != 0) return "theta must have shape [N, 2, 3] or [N, 3, 4], got " + text(theta);
    *grid = PartialShape::dynamic();
    return "";
  }
  std::string err = check_theta(theta, nsp);
  if (!err.empty()) return "theta must have shape [N, 2, 3] or [N, 3, 4], got " + text(theta);
  Dimension n = theta.rank().is_static() ? theta[0] : Dimension::dynamic();
  std::vector<Dimension> dims;
  err = spatial_out(a, size_shape, size, nsp, n, nullptr, &dims);
  if (!err.empty()) return err;
  dims.insert(dims.begin(), n);
  dims.push_back(nsp);
  *grid = PartialShape(dims);
  return "";
}

}  // namespace sk_ov
