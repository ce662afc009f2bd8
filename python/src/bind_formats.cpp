// The fixq.formats submodule: number formats fixq packs values into. The registry of every
// format by name, with the .bin container, is bind_formats_registry.cpp; each family's own
// functions have their own file: GGUF blocks (bind_formats_gguf.cpp), low-precision floats
// (_lowp), OCP MX blocks (_mx) and packed integer weights with GPTQ import (_packed).
#include "bind_formats_util.h"

namespace fixq::py {

void bind_formats(pybind11::module_& m) {
  pybind11::module_ formats = m.def_submodule(
      "formats",
      "Number formats: every format by name (all_formats, encode, decode, and .bin files: save_encoded,\n"
      "load_encoded); ggml's GGUF block formats (gguf_*), low-precision floats float8/6/4, bf16, fp16\n"
      "(lowp_*), OCP MX blocks (mx_*), and 2/4/8-bit group-quantized weights with GPTQ import\n"
      "(PackedWeights, weight_only_matmul, *_gptq*). Arrays are numpy; float inputs are taken as float32\n"
      "(without a copy when already C-contiguous float32), bad input raises ValueError.");
  bind_formats_registry(formats);
  bind_formats_gguf(formats);
  bind_formats_lowp(formats);
  bind_formats_mx(formats);
  bind_formats_packed(formats);
}

}  // namespace fixq::py
