// load_gru_onnx and load_model_onnx in a build without ONNX support (-DFIXQ_ONNX=OFF): a clear refusal.
#include "fixq/error.h"
#include "fixq/gru.h"
#include "fixq/model.h"

namespace fixq {

bool onnx_supported() { return false; }

GruModel load_gru_onnx(const std::string& path, const std::string&) {
  fail("load_gru_onnx: ", path, ": this fixq was built without ONNX support; install Debian's libonnx-dev and "
       "libprotobuf-dev and configure with -DFIXQ_ONNX=ON (the default)");
}

Model load_model_onnx(const std::string& path) {
  fail("load_model_onnx: ", path, ": this fixq was built without ONNX support; install Debian's libonnx-dev and "
       "libprotobuf-dev and configure with -DFIXQ_ONNX=ON (the default)");
}

}  // namespace fixq
