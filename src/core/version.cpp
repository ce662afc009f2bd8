// fixq::version(): FIXQ_VERSION comes from CMakeLists.txt's project() (cmake/FixqLibrary.cmake).
#include "fixq/version.h"

namespace fixq {

std::string_view version() { return FIXQ_VERSION; }

}  // namespace fixq
