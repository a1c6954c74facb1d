// A fused model run from C++ through onnxruntime's C++ API, with surgeon's op library
// registered: one run on a fixed input, its first output printed as Python prints it
// (samples/cpp/README.md).   Usage: run_fused MODEL.onnx LIBRARY   (LIBRARY: `surgeon ort-lib`)
#include <onnxruntime_cxx_api.h>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s MODEL.onnx LIBRARY\n", argv[0]);
    return 2;
  }
  try {
    Ort::Env env(ORT_LOGGING_LEVEL_WARNING, "run_fused");
    Ort::SessionOptions options;
    options.RegisterCustomOpsLibrary(argv[2]);  // custom.ops::FusedGridSample and AffineGrid
    Ort::Session session(env, argv[1], options);
    // The first input, dynamic dims set to 1, filled with (i % 17) / 16 - 0.5 (exact in float).
    std::vector<int64_t> shape = session.GetInputTypeInfo(0).GetTensorTypeAndShapeInfo().GetShape();
    size_t count = 1;
    for (int64_t& d : shape) count *= (d = d < 1 ? 1 : d);
    std::vector<float> x(count);
    for (size_t i = 0; i < count; ++i) x[i] = (float)(i % 17) / 16.0f - 0.5f;
    Ort::MemoryInfo memory = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
    Ort::Value input = Ort::Value::CreateTensor<float>(memory, x.data(), count, shape.data(), shape.size());
    Ort::AllocatorWithDefaultOptions alloc;
    Ort::AllocatedStringPtr in_name = session.GetInputNameAllocated(0, alloc);
    Ort::AllocatedStringPtr out_name = session.GetOutputNameAllocated(0, alloc);
    const char* in_names[] = {in_name.get()};
    const char* out_names[] = {out_name.get()};
    std::vector<Ort::Value> outputs = session.Run(Ort::RunOptions{nullptr}, in_names, &input, 1, out_names, 1);
    const float* y = outputs[0].GetTensorData<float>();
    size_t n = outputs[0].GetTensorTypeAndShapeInfo().GetElementCount();
    for (size_t i = 0; i < n; ++i) printf("%.6f%c", y[i], i + 1 < n ? ' ' : '\n');
  } catch (const Ort::Exception& e) {
    fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
