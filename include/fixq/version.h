// fixq/version.h — which fixq this is.
#pragma once

#include <string_view>

namespace fixq {

// "0.1.0": the version of CMakeLists.txt's project(), fixq's one version number. The CLI's
// --version, Python's fixq.__version__ and the CMake and pkg-config packages all report it.
std::string_view version();

}  // namespace fixq
