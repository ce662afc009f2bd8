# ONNX import (src/onnx_import/): reads ONNX models with Debian's libonnx-dev (the
# generated onnx-ml.pb.h and libonnx_proto) and libprotobuf-dev. Linking the shared
# libonnx_proto, not a copy of onnx.proto compiled here, keeps one registration of the
# ONNX messages in a process that also loads torch or the onnx Python package (protobuf
# aborts on a second one). With -DFIXQ_ONNX=OFF, src/onnx_import/unavailable.cpp takes
# its place and load_gru_onnx and load_model_onnx say how to enable it.
option(FIXQ_ONNX "Read ONNX models (Debian's libonnx-dev and libprotobuf-dev)" ON)
set(FIXQ_ONNX_REAL ${PROJECT_SOURCE_DIR}/src/onnx_import/gru_onnx.cpp ${PROJECT_SOURCE_DIR}/src/onnx_import/tensor.cpp
  ${PROJECT_SOURCE_DIR}/src/onnx_import/gru_chain.cpp ${PROJECT_SOURCE_DIR}/src/onnx_import/shape_fold.cpp
  ${PROJECT_SOURCE_DIR}/src/onnx_import/model_onnx.cpp ${PROJECT_SOURCE_DIR}/src/onnx_import/model_layout.cpp)
set(FIXQ_ONNX_STUB ${PROJECT_SOURCE_DIR}/src/onnx_import/unavailable.cpp)
if(FIXQ_ONNX)
  find_package(Protobuf QUIET)
  find_package(ONNX CONFIG QUIET)
  if(NOT Protobuf_FOUND OR NOT TARGET onnx_proto)
    message(FATAL_ERROR "fixq: ONNX import needs Debian's libonnx-dev and libprotobuf-dev (scripts/setup.sh installs "
                        "them); or configure with -DFIXQ_ONNX=OFF to build without it")
  endif()
  set_source_files_properties(${FIXQ_ONNX_STUB} PROPERTIES HEADER_FILE_ONLY ON)
  # Only these files see ONNX's headers (Debian's in /usr/include) and its definitions, so
  # that the rest of the library does not rebuild with them.
  get_target_property(FIXQ_ONNX_DEFINITIONS onnx_proto INTERFACE_COMPILE_DEFINITIONS)
  set_source_files_properties(${FIXQ_ONNX_REAL} PROPERTIES COMPILE_DEFINITIONS "${FIXQ_ONNX_DEFINITIONS}")
  # PRIVATE: no public header names an ONNX or protobuf type, so programs using libfixq.so
  # never link them themselves (the library's DT_NEEDED loads them); a static libfixq.a
  # passes them on as link-only dependencies, which the installed CMake package
  # (fixqConfig.cmake finds Protobuf and ONNX) and fixq.pc (Libs.private) carry.
  foreach(t fixq_static fixq_shared)
    target_link_libraries(${t} PRIVATE onnx_proto protobuf::libprotobuf)
  endforeach()
else()
  set_source_files_properties(${FIXQ_ONNX_REAL} PROPERTIES HEADER_FILE_ONLY ON)
endif()
