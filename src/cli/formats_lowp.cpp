// Transitional: the lowp format entries are being written (issue work in progress).
#include "cli/format_registry.h"

namespace fixq::cli {

std::vector<CliFormat> lowp_formats() { return {}; }

}  // namespace fixq::cli
