# The optional CUDA part: src/cuda/, the library fixq_cuda (fixq/cuda.h), and what uses it
# (`fixq gru run --device cuda`, `fixq bench gru|gemm --device cuda`, `fixq info`, the GPU
# tests). FIXQ_CUDA = AUTO (build it where CMake finds a CUDA toolkit), ON (required) or OFF.
# Machine code for sm_90 (H100, H200) and sm_80 (A100), and compute_80 PTX that newer GPUs
# compile when they load it. Without a toolkit (a fresh Debian 12) nothing of it is built
# and the GPU tests report themselves skipped.
set(FIXQ_CUDA AUTO CACHE STRING "Build the CUDA kernels (src/cuda/): AUTO, ON or OFF")
set_property(CACHE FIXQ_CUDA PROPERTY STRINGS AUTO ON OFF)
fixq_tristate(FIXQ_CUDA cuda_mode)
set(FIXQ_CUDA_ENABLED OFF)
if(cuda_mode STREQUAL "AUTO" AND (FIXQ_SANITIZE OR FIXQ_FUZZ))
  # The sanitizer builds check the host code; the CUDA runtime's device mappings need
  # ASan's shadow gap left unprotected, and CI builds and tests the GPU part in Release.
  message(STATUS "fixq: FIXQ_CUDA: off in a sanitizer build (AUTO; pass -DFIXQ_CUDA=ON to build it anyway)")
elseif(NOT cuda_mode STREQUAL "OFF")
  # The toolkit's usual home, for shells whose PATH lacks it.
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(NOT CMAKE_CUDA_COMPILER)
    fixq_optional_missing(FIXQ_CUDA ${cuda_mode} "no CUDA toolkit (nvcc) was found; the GPU part is not built")
  else()
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90-real 80-real 80-virtual)
    endif()
    enable_language(CUDA)
    # CMake 3.25 (Debian 12's) predates nvcc 12 and knows no C++20 dialect for it; the
    # library's targets carry cxx_std_20 to their CUDA files too.
    if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    endif()
    find_package(CUDAToolkit REQUIRED)
    set(FIXQ_CUDA_ENABLED ON)
    message(STATUS "fixq: FIXQ_CUDA: on (CUDA ${CUDAToolkit_VERSION}, ${CMAKE_CUDA_COMPILER}, architectures "
                   "${CMAKE_CUDA_ARCHITECTURES})")
    add_subdirectory(${PROJECT_SOURCE_DIR}/src/cuda ${PROJECT_BINARY_DIR}/src/cuda)
  endif()
endif()
