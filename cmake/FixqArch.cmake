# The target architecture and its instruction-set families, read from the one list of
# families (FIXQ_KNOWN_ISA_FAMILIES in include/fixq/cpu.h, rows X(Enum, name, arch, ...)):
#   FIXQ_ARCH                   x86_64, aarch64 or other (from CMAKE_SYSTEM_PROCESSOR)
#   FIXQ_ISA_FAMILIES           the target's families other than scalar, in the list's order
#   FIXQ_FOREIGN_ISA_FAMILIES   every other architecture's families: files with their suffix
#                               are left out of this build (cmake/FixqLibrary.cmake, tests/)
# Each family of FIXQ_ISA_FAMILIES must have its flags, FIXQ_ISA_FLAGS_<family>, in
# cmake/FixqIsa.cmake; configuring fails if one has none.
string(TOLOWER "${CMAKE_SYSTEM_PROCESSOR}" fixq_processor)
if(fixq_processor MATCHES "^(x86_64|amd64)$")
  set(FIXQ_ARCH x86_64)
elseif(fixq_processor MATCHES "^(aarch64|arm64)$")
  set(FIXQ_ARCH aarch64)
else()
  set(FIXQ_ARCH other)
endif()

# (Only each row's head is matched: the rows end in a backslash, which a CMake list would
# take for an escape.)
file(READ ${PROJECT_SOURCE_DIR}/include/fixq/cpu.h fixq_cpu_h)
string(REGEX MATCHALL "\n  X\\([A-Za-z0-9]+, [a-z0-9]+, [a-z0-9_]+," fixq_family_rows "${fixq_cpu_h}")
set(FIXQ_ISA_FAMILIES)
set(FIXQ_FOREIGN_ISA_FAMILIES)
foreach(row IN LISTS fixq_family_rows)
  string(REGEX MATCH "X\\([A-Za-z0-9]+, ([a-z0-9]+), ([a-z0-9_]+)," _ "${row}")
  set(family ${CMAKE_MATCH_1})
  set(arch ${CMAKE_MATCH_2})
  if(arch STREQUAL "any")
    continue()
  elseif(arch STREQUAL FIXQ_ARCH)
    list(APPEND FIXQ_ISA_FAMILIES ${family})
  else()
    list(APPEND FIXQ_FOREIGN_ISA_FAMILIES ${family})
  endif()
endforeach()
if(NOT fixq_family_rows OR NOT "avx2" IN_LIST FIXQ_ISA_FAMILIES AND NOT "avx2" IN_LIST FIXQ_FOREIGN_ISA_FAMILIES)
  message(FATAL_ERROR "cmake/FixqArch.cmake could not read the families of include/fixq/cpu.h")
endif()
message(STATUS "fixq: target ${FIXQ_ARCH}, kernel families scalar ${FIXQ_ISA_FAMILIES}")
