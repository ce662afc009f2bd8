// Which peers this build of fixq_compare measures against (compare/compare.h).
#include "compare/compare.h"

namespace fixq::bench {

bool have_onednn() { return FIXQ_PEER_ONEDNN != 0; }

std::string onednn_missing_note() {
  if (have_onednn()) return {};
  return "this fixq was built without oneDNN, so only fixq is timed and the oneDNN columns are empty; to compare, "
         "install oneDNN 2.x (Debian: apt-get install libdnnl-dev), then reconfigure and rebuild "
         "(cmake -S . -B build -DFIXQ_ONEDNN=ON && cmake --build build)";
}

}  // namespace fixq::bench
