# The fixq library: every module under src/<module>/ is compiled into one object library,
# from which the static and the shared library are made.
#
# Files named *_avx2.cpp, *_avx512*.cpp (x86-64), *_neon.cpp, *_dotprod.cpp ... (aarch64) hold
# the fast kernels of one instruction-set family; only the target architecture's are
# compiled, each with its family's flags (cmake/FixqIsa.cmake), and src/cpu/ decides at run
# time whether the CPU may call them, so the library runs on any CPU of its architecture.
# Every folder under src/ is a module of the library, except src/cli (the tool) and
# src/cuda (the optional GPU library fixq_cuda, cmake/FixqCuda.cmake); a module may have
# folders of its own (src/gru/int/fast/).
include(${CMAKE_CURRENT_LIST_DIR}/FixqIsa.cmake)
file(GLOB_RECURSE FIXQ_MODULE_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/*.cpp)
list(FILTER FIXQ_MODULE_SOURCES EXCLUDE REGEX "/src/(cli|cuda)/")
fixq_drop_foreign_isa_files(FIXQ_MODULE_SOURCES)
fixq_set_isa_flags(${FIXQ_MODULE_SOURCES})

find_package(Threads REQUIRED)
add_library(fixq_objects OBJECT ${FIXQ_MODULE_SOURCES})
target_link_libraries(fixq_objects PUBLIC Threads::Threads)
target_include_directories(fixq_objects
  PUBLIC ${PROJECT_SOURCE_DIR}/include
  PRIVATE ${PROJECT_SOURCE_DIR}/src)
# fixq::version() (src/core/version.cpp): the project's one version number.
set_property(SOURCE ${PROJECT_SOURCE_DIR}/src/core/version.cpp APPEND PROPERTY COMPILE_DEFINITIONS
  FIXQ_VERSION="${PROJECT_VERSION}")

add_library(fixq_static STATIC $<TARGET_OBJECTS:fixq_objects>)
add_library(fixq_shared SHARED $<TARGET_OBJECTS:fixq_objects>)
# Headers from the source tree here, from <prefix>/include once installed (cmake/FixqInstall.cmake).
include(GNUInstallDirs)
foreach(t fixq_static fixq_shared)
  target_include_directories(${t} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
                                         $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(${t} PUBLIC Threads::Threads)
  set_target_properties(${t} PROPERTIES OUTPUT_NAME fixq)
endforeach()
# In-tree users (CLI, tests, benchmarks) link the static library.
add_library(fixq::fixq ALIAS fixq_static)
