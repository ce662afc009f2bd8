// Transitional: the gguf format entries are being written (issue work in progress).
#include "cli/format_registry.h"

namespace fixq::cli {

std::vector<CliFormat> gguf_formats() { return {}; }

}  // namespace fixq::cli
