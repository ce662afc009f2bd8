// write_gru_tables: every activation table of a model as .npy and as C arrays, for
// hardware teams that reimplement the lookup (docs/spec.md 4.4).
#include <string>
#include <vector>

#include "export/c_text.h"
#include "fixq/error.h"
#include "fixq/export.h"
#include "fixq/npy.h"
#include "io/atomic_file.h"

namespace fixq {

std::vector<std::string> write_gru_tables(const QuantizedGru& model, const std::string& dir) {
  const std::string base = dir.empty() ? std::string(".") : dir;
  make_directories(base, "GRU tables");
  const size_t cells = static_cast<size_t>(model.num_layers() * (model.bidirectional() ? 2 : 1));
  const char* names[3] = {"sig_z", "sig_r", "tanh_g"};
  const char* what[3] = {"sigmoid, z_pre -> z_out", "sigmoid, r_pre -> r_out", "tanh, g_pre -> g_out"};
  std::vector<std::string> written;
  std::string h =
      "/* tables.h: the activation tables of a fixq GRU exactly as its .fixq file stores them\n"
      " * (written by `fixq gru tables`). Lookup of an input value q (docs/spec.md 4.4):\n"
      " *   i = q - INPUT_MIN\n"
      " *   direct (FRAC_BITS 0):  LUT(q) = table[i]\n"
      " *   interpolated:          k = i >> SHIFT, fr = i & (2^SHIFT - 1),\n"
      " *     LUT(q) = SAT(RSHR(table[k] * 2^SHIFT + (table[k+1] - table[k]) * fr, FRAC_BITS + SHIFT), OUT_MIN, OUT_MAX)\n"
      " *   with RSHR(x, n) = floor((x + 2^(n-1)) / 2^n) and SAT a clamp. Cells are numbered\n"
      " *   layer * directions + direction. */\n"
      "#ifndef FIXQ_GRU_TABLES_H\n#define FIXQ_GRU_TABLES_H\n\n#include <stdint.h>\n";
  for (size_t c = 0; c < cells; ++c) {
    const auto luts = model.tables(c);
    for (int t = 0; t < 3; ++t) {
      const ActivationLut& l = *luts[static_cast<size_t>(t)];
      const auto e = l.table();
      const std::string id = "cell" + std::to_string(c) + "_" + names[t];
      std::string upper = id;
      for (char& ch : upper) ch = static_cast<char>(ch >= 'a' && ch <= 'z' ? ch - 'a' + 'A' : ch);
      const std::string npy = base + "/cell" + std::to_string(c) + "." + names[t] + ".npy";
      save_npy_i32(npy, e.data(), Shape{static_cast<int64_t>(e.size())});
      written.push_back(npy);
      h += "\n/* cell " + std::to_string(c) + ", " + what[t] + (l.direct() ? ", direct" : ", interpolated") + " */\n";
      h += "#define " + upper + "_INPUT_MIN " + export_detail::c_macro_int(l.input_min()) + "\n";
      h += "#define " + upper + "_SHIFT " + std::to_string(l.shift()) + "\n";
      h += "#define " + upper + "_FRAC_BITS " + std::to_string(l.frac_bits()) + "\n";
      h += "#define " + upper + "_OUT_MIN " + export_detail::c_macro_int(l.output_range().qmin) + "\n";
      h += "#define " + upper + "_OUT_MAX " + export_detail::c_macro_int(l.output_range().qmax) + "\n";
      h += "#define " + upper + "_ENTRIES " + std::to_string(e.size()) + "\n";
      h += "static const int32_t " + id + "[" + std::to_string(e.size()) + "] = " + export_detail::c_array_body(e) + ";\n";
    }
  }
  h += "\n#endif /* FIXQ_GRU_TABLES_H */\n";
  const std::string header = base + "/tables.h";
  write_file_atomically(header, {{h.data(), h.size()}}, "fixq gru tables");
  written.push_back(header);
  return written;
}

}  // namespace fixq
