// fixq gguf info: what a GGUF file holds, its metadata and a table of its tensors.
#include <cinttypes>
#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "fixq/gguf_file.h"

namespace fixq::cli {

namespace {

struct Options {
  std::string path;
  std::size_t items = 8;
};

void info_cmd(const Options& o) {
  const gguf::File f(o.path);
  uint64_t bytes = 0;
  std::map<std::string, int> per_type;
  for (const gguf::TensorInfo& t : f.tensors()) {
    bytes += t.bytes;
    ++per_type[std::string(t.type->name)];
  }
  std::printf("%s: GGUF v%u, %zu metadata entries, %zu tensors (%" PRIu64 " bytes of data from byte %" PRIu64
              ", alignment %u)\n",
              o.path.c_str(), f.version(), f.metadata().size(), f.tensors().size(), bytes, f.data_offset(), f.alignment());
  std::string types;
  for (const auto& [name, n] : per_type) types += (types.empty() ? "" : ", ") + name + " " + std::to_string(n);
  if (!types.empty()) std::printf("tensor types: %s\n", types.c_str());

  std::printf("\nmetadata:\n");
  for (const auto& [key, value] : f.metadata())
    std::printf("  %-40s %-8s %s\n", gguf::printable(key).c_str(), std::string(gguf::to_string(value.type())).c_str(),
                value.str(o.items).c_str());

  std::printf("\ntensors (shape in C order, i.e. ggml's ne reversed; offset from the data section):\n");
  std::printf("  %-48s %-8s %-22s %14s %14s\n", "name", "type", "shape", "offset", "bytes");
  for (const gguf::TensorInfo& t : f.tensors())
    std::printf("  %-48s %-8s %-22s %14" PRIu64 " %14" PRIu64 "%s\n", gguf::printable(t.name).c_str(), std::string(t.type->name).c_str(),
                shape_str(t.shape).c_str(), t.offset, t.bytes, t.type->decodable() ? "" : "  (fixq cannot decode)");
}

}  // namespace

void register_gguf(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("gguf", "Inspect GGUF files (llama.cpp / ggml models)");
  cmd->require_subcommand(1);
  auto o = std::make_shared<Options>();
  CLI::App* ic = cmd->add_subcommand("info", "Print a GGUF file's metadata and a table of its tensors");
  ic->add_option("file", o->path, "GGUF file (v2 or v3)")->required()->check(CLI::ExistingFile);
  ic->add_option("--items", o->items, "array items shown per metadata value")->capture_default_str();
  ic->footer("The whole header is checked first: a truncated or corrupt file is refused with what is wrong.\n"
             "Example (from the repository root: pack a float GRU into GGUF q8_0, then look at it):\n"
             "  build/bin/fixq formats quantize --type q8_0 data/charlm/gru.weight_hh_l0.npy -o w.gguf\n"
             "  build/bin/fixq gguf info w.gguf");
  ic->callback([o] { info_cmd(*o); });
}

}  // namespace fixq::cli
