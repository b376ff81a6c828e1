// One TensorFlow op on XLA's buffers, as an XLA FFI custom call (`tf_ffi.py`).
//
// The op runs through TensorFlow's eager C API in the Python process's own
// eager context (set once by `KteSetContext`), so it shares TensorFlow's
// kernel cache and threads with the Python side. Arguments are XLA's buffers,
// wrapped without a copy where TensorFlow's alignment allows; the result is
// copied into XLA's output buffer.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "tensorflow/c/c_api.h"
#include "tensorflow/c/eager/c_api.h"
#include "tensorflow/c/eager/c_api_experimental.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

constexpr char kCpu[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr uintptr_t kAlignment = 64;  // TensorFlow's CPU tensors.

TFE_Context* context = nullptr;

void KeepBuffer(void*, size_t, void*) {}  // XLA owns the buffer.

// Owns the handles and the status of one call.
struct Call {
  TF_Status* status = TF_NewStatus();
  std::vector<TFE_TensorHandle*> handles;
  ~Call() {
    for (TFE_TensorHandle* h : handles) TFE_DeleteTensorHandle(h);
    TF_DeleteStatus(status);
  }
  bool ok() const { return TF_GetCode(status) == TF_OK; }
};

TFE_TensorHandle* FromBuffer(ffi::AnyBuffer buffer, Call& call) {
  auto dimensions = buffer.dimensions();
  std::vector<int64_t> dims(dimensions.begin(), dimensions.end());
  void* data = buffer.untyped_data();
  if (reinterpret_cast<uintptr_t>(data) % kAlignment == 0) {
    return TFE_NewTensorHandleFromDeviceMemory(context, kCpu, TF_FLOAT, dims.data(),
                                               static_cast<int>(dims.size()), data,
                                               buffer.size_bytes(), KeepBuffer, nullptr,
                                               call.status);
  }
  TF_Tensor* copy = TF_AllocateTensor(TF_FLOAT, dims.data(), static_cast<int>(dims.size()),
                                      buffer.size_bytes());
  std::memcpy(TF_TensorData(copy), data, buffer.size_bytes());
  TFE_TensorHandle* handle = TFE_NewTensorHandle(copy, call.status);
  TF_DeleteTensor(copy);
  return handle;
}

TFE_TensorHandle* Sizes(ffi::Span<const int64_t> sizes, Call& call) {
  int64_t n = static_cast<int64_t>(sizes.size());
  TF_Tensor* tensor = TF_AllocateTensor(TF_INT32, &n, 1, n * sizeof(int32_t));
  int32_t* data = static_cast<int32_t*>(TF_TensorData(tensor));
  for (int64_t i = 0; i < n; ++i) data[i] = static_cast<int32_t>(sizes[i]);
  TFE_TensorHandle* handle = TFE_NewTensorHandle(tensor, call.status);
  TF_DeleteTensor(tensor);
  return handle;
}

ffi::Error Failed(const Call& call, std::string_view op) {
  return ffi::Error(ffi::ErrorCode::kInternal,
                    std::string(op) + ": " + TF_Message(call.status));
}

// `op(a, b)`, or for a backprop op with its sizes (the result's shape, an
// int32 vector) inserted among the inputs at `sizes_at` (0 or 1; -1: none),
// with a convolution's attributes.
ffi::Error RunOp(ffi::AnyBuffer a, ffi::AnyBuffer b, ffi::Result<ffi::AnyBuffer> out,
                 std::string_view op_name, ffi::Span<const int64_t> strides,
                 ffi::Span<const int64_t> dilations, std::string_view padding,
                 int64_t sizes_at) {
  if (context == nullptr) {
    return ffi::Error(ffi::ErrorCode::kFailedPrecondition, "KteSetContext was not called");
  }
  Call call;
  call.handles = {FromBuffer(a, call), FromBuffer(b, call)};
  if (!call.ok()) return Failed(call, op_name);
  if (sizes_at >= 0) {
    call.handles.insert(call.handles.begin() + sizes_at, Sizes(out->dimensions(), call));
    if (!call.ok()) return Failed(call, op_name);
  }
  std::string name(op_name);
  TFE_Op* op = TFE_NewOp(context, name.c_str(), call.status);
  if (!call.ok()) return Failed(call, op_name);
  TFE_OpSetDevice(op, kCpu, call.status);
  for (TFE_TensorHandle* handle : call.handles) TFE_OpAddInput(op, handle, call.status);
  std::vector<int64_t> strides_v(strides.begin(), strides.end());
  std::vector<int64_t> dilations_v(dilations.begin(), dilations.end());
  TFE_OpSetAttrType(op, "T", TF_FLOAT);
  TFE_OpSetAttrIntList(op, "strides", strides_v.data(), static_cast<int>(strides_v.size()));
  TFE_OpSetAttrIntList(op, "dilations", dilations_v.data(),
                       static_cast<int>(dilations_v.size()));
  TFE_OpSetAttrString(op, "padding", padding.data(), padding.size());
  TFE_TensorHandle* result = nullptr;
  int num_results = 1;
  if (call.ok()) TFE_Execute(op, &result, &num_results, call.status);
  TFE_DeleteOp(op);
  if (!call.ok()) return Failed(call, op_name);
  call.handles.push_back(result);
  TF_Tensor* tensor = TFE_TensorHandleResolve(result, call.status);
  if (!call.ok()) return Failed(call, op_name);
  if (TF_TensorByteSize(tensor) != out->size_bytes()) {
    TF_DeleteTensor(tensor);
    return ffi::Error(ffi::ErrorCode::kInternal,
                      std::string(op_name) + ": result size differs from XLA's buffer");
  }
  std::memcpy(out->untyped_data(), TF_TensorData(tensor), out->size_bytes());
  TF_DeleteTensor(tensor);
  return ffi::Error::Success();
}

}  // namespace

extern "C" void KteSetContext(void* eager_context) {
  context = static_cast<TFE_Context*>(eager_context);
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(KteTfOp, RunOp,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>()
                                  .Attr<std::string_view>("op")
                                  .Attr<ffi::Span<const int64_t>>("strides")
                                  .Attr<ffi::Span<const int64_t>>("dilations")
                                  .Attr<std::string_view>("padding")
                                  .Attr<int64_t>("sizes_at"));
