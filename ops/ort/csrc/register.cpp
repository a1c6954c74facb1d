// The library's one entry point, called by SessionOptions.register_custom_ops_library for every
// session options object it is registered with: adds the custom.ops domain (created once, kept
// for the life of the process: sessions keep pointers to it).  Built with SURGEON_ORT_CUDA,
// the domain holds the CUDA provider's kernels beside the CPU ones.
#include <stdio.h>

#include <mutex>

#include "ort_ops.h"

#if defined(_WIN32)
#define SK_ORT_EXPORT __declspec(dllexport)
#else
#define SK_ORT_EXPORT __attribute__((visibility("default")))
#endif

namespace sk_ort {
namespace {

OrtCustomOpDomain* g_domain = nullptr;
std::string g_error;  // why the domain could not be made

void make_domain(const OrtApi* api) {
  OrtCustomOpDomain* domain = nullptr;
  OrtStatus* s = api->CreateCustomOpDomain("custom.ops", &domain);
  if (s == nullptr) s = add_ops(api, domain, Device::kCpu);
#ifdef SURGEON_ORT_CUDA
  if (s == nullptr) s = add_ops(api, domain, Device::kCuda);
#endif
  if (s != nullptr) {
    g_error = std::string("surgeon op library: ") + api->GetErrorMessage(s);
    api->ReleaseStatus(s);
    if (domain != nullptr) api->ReleaseCustomOpDomain(domain);
    return;
  }
  g_domain = domain;
}

}  // namespace
}  // namespace sk_ort

extern "C" SK_ORT_EXPORT OrtStatus* ORT_API_CALL RegisterCustomOps(OrtSessionOptions* options,
                                                                   const OrtApiBase* api_base) {
  using namespace sk_ort;
  const OrtApi* api = api_base->GetApi(ORT_API_VERSION);
  if (api == nullptr) {  // an onnxruntime older than the headers: say so through the oldest API
    const OrtApi* oldest = api_base->GetApi(1);
    char text[256];
    snprintf(text, sizeof text,
             "surgeon op library: built against onnxruntime's API %d (release 1.%d) but this onnxruntime is %s; "
             "rebuild it with that release's headers ($ONNXRUNTIME_INCLUDE_DIR)",
             ORT_API_VERSION, ORT_API_VERSION, api_base->GetVersionString());
    return oldest != nullptr ? oldest->CreateStatus(ORT_FAIL, text) : nullptr;
  }
  static std::once_flag once;
  std::call_once(once, make_domain, api);
  if (g_domain == nullptr) return api->CreateStatus(ORT_FAIL, g_error.c_str());
  return api->AddCustomOpDomain(options, g_domain);
}
