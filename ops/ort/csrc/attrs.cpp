// A node's attributes, read through the C API when its kernel is created, so that a bad one
// fails the session's creation with a clear message instead of every run.
#include <string.h>

#include "ort_ops.h"
#include "surgeon_kernels.h"

namespace sk_ort {
namespace {

enum class Found { kYes, kNo };

// The C API answers a missing attribute and one of another type alike (an error status): a
// getter that fails is followed by the others, to tell the two apart.
bool ok(const OrtApi* api, OrtStatus* status) {
  if (status == nullptr) return true;
  api->ReleaseStatus(status);
  return false;
}

Found get_int(const OrtApi* api, const OrtKernelInfo* info, const char* name, int64_t* out) {
  return ok(api, api->KernelInfoGetAttribute_int64(info, name, out)) ? Found::kYes : Found::kNo;
}

Found get_string(const OrtApi* api, const OrtKernelInfo* info, const char* name, std::string* out) {
  size_t size = 0;
  if (!ok(api, api->KernelInfoGetAttribute_string(info, name, nullptr, &size))) return Found::kNo;
  std::vector<char> buf(size + 1, '\0');
  if (!ok(api, api->KernelInfoGetAttribute_string(info, name, buf.data(), &size))) return Found::kNo;
  *out = buf.data();
  return Found::kYes;
}

Found get_ints(const OrtApi* api, const OrtKernelInfo* info, const char* name, std::vector<int64_t>* out) {
  size_t size = 0;
  if (!ok(api, api->KernelInfoGetAttributeArray_int64(info, name, nullptr, &size))) return Found::kNo;
  out->assign(size, 0);
  if (size > 0 && !ok(api, api->KernelInfoGetAttributeArray_int64(info, name, out->data(), &size))) return Found::kNo;
  return Found::kYes;
}

// Whether `name` is there with some type (after the expected type's getter failed).
bool present(const OrtApi* api, const OrtKernelInfo* info, const char* name) {
  int64_t i;
  float f;
  std::string s;
  std::vector<int64_t> v;
  return get_int(api, info, name, &i) == Found::kYes || get_string(api, info, name, &s) == Found::kYes ||
         get_ints(api, info, name, &v) == Found::kYes ||
         ok(api, api->KernelInfoGetAttribute_float(info, name, &f));
}

std::string wrong_type(const char* name, const char* type) {
  return std::string("attribute ") + name + " must be " + type + " (ops/OPS.md)";
}

// A STRING attribute mapped through `names` (nullptr-terminated, parallel to `codes`).
std::string read_enum(const OrtApi* api, const OrtKernelInfo* info, const char* name, const char* const* names,
                      const int* codes, const char* expected, int* out) {
  std::string value;
  if (get_string(api, info, name, &value) == Found::kNo)
    return present(api, info, name) ? wrong_type(name, "a STRING") : "";  // absent: the default
  for (int k = 0; names[k] != nullptr; ++k)
    if (value == names[k]) {
      *out = codes[k];
      return "";
    }
  return "unknown " + std::string(name) + " '" + value + "'; expected " + expected;
}

bool has_size_input(const OrtApi* api, const OrtKernelInfo* info, size_t index) {
  size_t count = 0, size = 0;
  if (!ok(api, api->KernelInfo_GetInputCount(info, &count)) || count <= index) return false;
  if (!ok(api, api->KernelInfo_GetInputName(info, index, nullptr, &size))) return false;
  return size > 1;  // a name, not "" (how a node skips an optional input)
}

}  // namespace

std::string read_attrs(const OrtApi* api, const OrtKernelInfo* info, OpKind kind, Attrs* a) {
  static const char* const kModes[] = {"bilinear", "nearest", "bicubic", "linear", "cubic", nullptr};
  static const int kModeCodes[] = {SURGEON_MODE_BILINEAR, SURGEON_MODE_NEAREST, SURGEON_MODE_BICUBIC,
                                   SURGEON_MODE_BILINEAR, SURGEON_MODE_BICUBIC};
  static const char* const kPads[] = {"zeros", "border", "reflection", nullptr};
  static const int kPadCodes[] = {SURGEON_PADDING_ZEROS, SURGEON_PADDING_BORDER, SURGEON_PADDING_REFLECTION};
  const bool fused = kind == OpKind::kFusedGridSample;
  std::string err;
  if (fused) {
    err = read_enum(api, info, "mode", kModes, kModeCodes,
                    "bilinear, nearest or bicubic (opset-20 linear, cubic)", &a->mode);
    if (err.empty())
      err = read_enum(api, info, "padding_mode", kPads, kPadCodes, "zeros, border or reflection", &a->padding);
    if (!err.empty()) return err;
  }
  int64_t ac = 0;
  if (get_int(api, info, "align_corners", &ac) == Found::kNo && present(api, info, "align_corners"))
    return wrong_type("align_corners", "an INT, 0 or 1");
  if (ac != 0 && ac != 1) return "align_corners must be 0 or 1, got " + std::to_string(ac);
  a->align_corners = (int)ac;

  bool has_attr = get_ints(api, info, "output_size", &a->output_size) == Found::kYes;
  int64_t scalar = 0;  // the INTS getter reads an INT attribute as an empty list
  if (has_attr && a->output_size.empty() && get_int(api, info, "output_size", &scalar) == Found::kYes) has_attr = false;
  if (!has_attr && present(api, info, "output_size")) return wrong_type("output_size", "INTS");
  a->size_input = has_size_input(api, info, fused ? 2 : 1);
  if (has_attr == a->size_input)
    return std::string(has_attr ? "has both an output_size attribute and a size input"
                                : "has neither an output_size attribute nor a size input") +
           "; exactly one gives the output size (ops/OPS.md)";
  if (has_attr) {
    const size_t n = a->output_size.size();
    if (n != 2 && n != 3)
      return "output_size must have 2 values [H_out, W_out] or 3 [D_out, H_out, W_out], got " + std::to_string(n);
    for (int64_t v : a->output_size)
      if (v < 0) return "output_size must not be negative, got " + std::to_string(v);
    if (fused && n == 3 && a->mode == SURGEON_MODE_BICUBIC) return "bicubic mode is 2-D only (as in torch)";
  }
  return "";
}

}  // namespace sk_ort
