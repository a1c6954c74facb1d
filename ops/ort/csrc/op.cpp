// The OrtCustomOp tables and the kernels behind them, for either device.
//
// Each op is registered once per element-type combination: onnxruntime infers a custom op's
// output type from an overload's declared types (it accepts at most one input of undefined
// type).  FusedGridSample also gets the mixed float16 / float32 pairs, whose kernels refuse to
// be created: a model that mixes them fails with our message, not a missing-kernel one.
// No shape-inference function: onnxruntime's wrapper dereferences absent optional inputs
// (a node that writes "" for size); fused models carry their output shapes in value_info.
#include <new>

#include "ort_ops.h"

namespace sk_ort {
namespace {

constexpr ONNXTensorElementDataType kF32 = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
constexpr ONNXTensorElementDataType kF16 = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16;
constexpr ONNXTensorElementDataType kI64 = ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64;

struct OpDef : OrtCustomOp {
  OpKind kind;
  Device device;
  ONNXTensorElementDataType x_type, theta_type;  // AffineGrid: theta_type only
};

struct Kernel {
  const OrtApi* api;
  const OpDef* op;
  Attrs attrs;
  std::string prefix;  // "custom.ops::FusedGridSample node 'name': "
};

const OpDef& def(const OrtCustomOp* op) { return *static_cast<const OpDef*>(op); }
bool fused(const OrtCustomOp* op) { return def(op).kind == OpKind::kFusedGridSample; }
const char* name_of(OpKind kind) { return kind == OpKind::kFusedGridSample ? "FusedGridSample" : "AffineGrid"; }
const char* type_name(ONNXTensorElementDataType t) { return t == kF16 ? "float16" : "float32"; }

OrtStatus* error(const OrtApi* api, OrtErrorCode code, const std::string& text) {
  return api->CreateStatus(code, text.c_str());
}

std::string node_name(const OrtApi* api, const OrtKernelInfo* info) {
  size_t size = 0;
  if (OrtStatus* s = api->KernelInfo_GetNodeName(info, nullptr, &size)) {
    api->ReleaseStatus(s);
    return "";
  }
  std::string name(size, '\0');
  if (OrtStatus* s = api->KernelInfo_GetNodeName(info, &name[0], &size)) {
    api->ReleaseStatus(s);
    return "";
  }
  return name.c_str();
}

OrtStatus* ORT_API_CALL create_kernel(const OrtCustomOp* op, const OrtApi* api, const OrtKernelInfo* info,
                                      void** out) {
  const OpDef& d = def(op);
  const std::string prefix = std::string("custom.ops::") + name_of(d.kind) + " node '" + node_name(api, info) + "': ";
  if (d.kind == OpKind::kFusedGridSample && d.x_type != d.theta_type)
    return error(api, ORT_INVALID_ARGUMENT,
                 prefix + "theta is " + type_name(d.theta_type) + " but X is " + type_name(d.x_type) +
                     "; theta must have X's element type (ops/OPS.md)");
  Kernel* k = new (std::nothrow) Kernel{api, &d, Attrs{}, prefix};
  if (k == nullptr) return error(api, ORT_FAIL, prefix + "out of memory");
  const std::string err = read_attrs(api, info, d.kind, &k->attrs);
  if (!err.empty()) {
    delete k;
    return error(api, ORT_INVALID_ARGUMENT, prefix + err);
  }
  *out = k;
  return nullptr;
}

OrtStatus* view_of(const OrtApi* api, const OrtValue* value, TensorView* v) {
  OrtTensorTypeAndShapeInfo* info = nullptr;
  if (OrtStatus* s = api->GetTensorTypeAndShape(value, &info)) return s;
  size_t rank = 0;
  OrtStatus* s = api->GetTensorElementType(info, &v->type);
  if (s == nullptr) s = api->GetDimensionsCount(info, &rank);
  if (s == nullptr) {
    v->shape.assign(rank, 0);
    s = api->GetDimensions(info, v->shape.data(), rank);
  }
  api->ReleaseTensorTypeAndShapeInfo(info);
  void* data = nullptr;
  if (s == nullptr) s = api->GetTensorMutableData(const_cast<OrtValue*>(value), &data);  // read only
  v->data = data;
  return s;
}

const Launcher& launcher(Device device) {
#ifdef SURGEON_ORT_CUDA  // only that build has CUDA kernels (and registers CUDA ops)
  if (device == Device::kCuda) return kCudaLauncher;
#endif
  (void)device;
  return kCpuLauncher;
}

OrtStatus* compute(Kernel& k, OrtKernelContext* ctx) {
  const OrtApi* api = k.api;
  const bool is_fused = k.op->kind == OpKind::kFusedGridSample;
  const size_t wanted = is_fused ? 3 : 2;
  size_t count = 0;
  if (OrtStatus* s = api->KernelContext_GetInputCount(ctx, &count)) return s;
  TensorView in[3];
  bool given[3] = {false, false, false};
  for (size_t i = 0; i < wanted && i < count; ++i) {
    const OrtValue* v = nullptr;
    if (OrtStatus* s = api->KernelContext_GetInput(ctx, i, &v)) return s;
    if (v == nullptr) continue;  // an absent optional input
    if (OrtStatus* s = view_of(api, v, &in[i])) return s;
    given[i] = true;
  }
  const size_t size_at = wanted - 1;
  const TensorView* size = given[size_at] ? &in[size_at] : nullptr;
  Call call;
  const std::string err = is_fused ? check_sample(k.attrs, in[0], in[1], size, &call)
                                   : check_grid(k.attrs, in[0], size, &call);
  if (!err.empty()) return error(api, ORT_INVALID_ARGUMENT, k.prefix + err);
  OrtValue* y = nullptr;
  if (OrtStatus* s = api->KernelContext_GetOutput(ctx, 0, call.y_shape.data(), call.y_shape.size(), &y)) return s;
  void* out = nullptr;
  if (OrtStatus* s = api->GetTensorMutableData(y, &out)) return s;
  if (call.empty) return nullptr;
  const Launcher& run = launcher(k.op->device);
  const int rc = is_fused ? run.sample(api, ctx, call, k.attrs, in[0].data, in[1].data, out)
                          : run.grid(api, ctx, call, k.attrs, in[0].data, out);
  if (rc != 0) return error(api, ORT_RUNTIME_EXCEPTION, k.prefix + "the kernel failed: " + run.error_string(rc));
  return nullptr;
}

OrtStatus* ORT_API_CALL compute_kernel(void* kernel, OrtKernelContext* ctx) {
  Kernel& k = *static_cast<Kernel*>(kernel);
  try {  // nothing below throws by design; std::bad_alloc from a vector still must not escape
    return compute(k, ctx);
  } catch (...) {
    return error(k.api, ORT_FAIL, k.prefix + "internal error (out of memory?)");
  }
}

void ORT_API_CALL destroy_kernel(void* kernel) { delete static_cast<Kernel*>(kernel); }

const char* ORT_API_CALL get_name(const OrtCustomOp* op) { return name_of(def(op).kind); }

const char* ORT_API_CALL get_ep(const OrtCustomOp* op) {
  return def(op).device == Device::kCuda ? "CUDAExecutionProvider" : nullptr;  // nullptr: the CPU provider
}

size_t ORT_API_CALL input_count(const OrtCustomOp* op) { return fused(op) ? 3 : 2; }
size_t ORT_API_CALL output_count(const OrtCustomOp*) { return 1; }

ONNXTensorElementDataType ORT_API_CALL input_type(const OrtCustomOp* op, size_t i) {
  const OpDef& d = def(op);
  if (i + 1 == input_count(op)) return kI64;  // size
  return fused(op) && i == 0 ? d.x_type : d.theta_type;
}

ONNXTensorElementDataType ORT_API_CALL output_type(const OrtCustomOp* op, size_t) {
  return fused(op) ? def(op).x_type : def(op).theta_type;
}

OrtCustomOpInputOutputCharacteristic ORT_API_CALL input_characteristic(const OrtCustomOp* op, size_t i) {
  return i + 1 == input_count(op) ? INPUT_OUTPUT_OPTIONAL : INPUT_OUTPUT_REQUIRED;
}

OrtCustomOpInputOutputCharacteristic ORT_API_CALL output_characteristic(const OrtCustomOp*, size_t) {
  return INPUT_OUTPUT_REQUIRED;
}

// On CUDA the size input stays in host memory: its values decide the output's shape.
OrtMemType ORT_API_CALL input_memory(const OrtCustomOp* op, size_t i) {
  return def(op).device == Device::kCuda && i + 1 == input_count(op) ? OrtMemTypeCPUInput : OrtMemTypeDefault;
}

int ORT_API_CALL one(const OrtCustomOp*) { return 1; }  // arity, homogeneity; opset versions 1..1

OpDef make(OpKind kind, Device device, ONNXTensorElementDataType x, ONNXTensorElementDataType theta) {
  OpDef d{};  // zero: every field a later API version added, and we do not use, is null
  d.version = ORT_API_VERSION;
  d.GetName = get_name;
  d.GetExecutionProviderType = get_ep;
  d.GetInputType = input_type;
  d.GetInputTypeCount = input_count;
  d.GetOutputType = output_type;
  d.GetOutputTypeCount = output_count;
  d.KernelDestroy = destroy_kernel;
  d.GetInputCharacteristic = input_characteristic;
  d.GetOutputCharacteristic = output_characteristic;
  d.GetInputMemoryType = input_memory;
  d.GetVariadicInputMinArity = one;
  d.GetVariadicInputHomogeneity = one;
  d.GetVariadicOutputMinArity = one;
  d.GetVariadicOutputHomogeneity = one;
  d.CreateKernelV2 = create_kernel;
  d.KernelComputeV2 = compute_kernel;
  d.GetStartVersion = one;
  d.GetEndVersion = one;
  d.kind = kind;
  d.device = device;
  d.x_type = x;
  d.theta_type = theta;
  return d;
}

template <Device D>
struct Ops {  // one static set per device: onnxruntime keeps pointers to them
  OpDef all[6] = {make(OpKind::kFusedGridSample, D, kF32, kF32), make(OpKind::kFusedGridSample, D, kF16, kF16),
                  make(OpKind::kFusedGridSample, D, kF16, kF32), make(OpKind::kFusedGridSample, D, kF32, kF16),
                  make(OpKind::kAffineGrid, D, kF32, kF32),      make(OpKind::kAffineGrid, D, kF16, kF16)};
};

}  // namespace

OrtStatus* add_ops(const OrtApi* api, OrtCustomOpDomain* domain, Device device) {
  static Ops<Device::kCpu> cpu;
  static Ops<Device::kCuda> cuda;
  OpDef* ops = device == Device::kCuda ? cuda.all : cpu.all;
  for (int k = 0; k < 6; ++k)
    if (OrtStatus* s = api->CustomOpDomain_Add(domain, &ops[k])) return s;
  return nullptr;
}

}  // namespace sk_ort
