# OpenBLAS for packed_bench only: the float sgemm the weight-only matmul is measured
# against (Debian libopenblas-dev). Its own cblas.h is used, which declares
# openblas_set_num_threads, whatever BLAS the cblas.h alternative points to.
find_library(FIXQ_OPENBLAS_LIBRARY NAMES openblas REQUIRED)
find_path(FIXQ_OPENBLAS_INCLUDE_DIR cblas.h
  PATHS /usr/include/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-pthread /usr/include/openblas
  NO_DEFAULT_PATH REQUIRED)
target_include_directories(packed_bench PRIVATE ${FIXQ_OPENBLAS_INCLUDE_DIR})
target_link_libraries(packed_bench PRIVATE ${FIXQ_OPENBLAS_LIBRARY})
