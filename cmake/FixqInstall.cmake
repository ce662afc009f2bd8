# `cmake --install build --prefix P` installs fixq as a library users build against:
#   P/include/fixq/*.h                       the public headers
#   P/<libdir>/libfixq.a, libfixq.so.*       the static and the shared library
#   P/bin/fixq                               the command-line tool
#   P/<libdir>/cmake/fixq/                   find_package(fixq CONFIG): fixq::fixq (shared),
#                                            fixq::fixq_static
#   P/<libdir>/pkgconfig/fixq.pc             pkg-config --cflags --libs fixq (shared)
# Both packages are relocatable: they find P from their own location, so an installed tree
# may be moved or packaged. The Python package installs through pip instead (pyproject.toml).
include(CMakePackageConfigHelpers)

# C++20 is part of the interface (the headers use it), so consumers of the CMake targets get
# it without asking; pkg-config users pass -std=c++20 themselves.
foreach(t fixq_static fixq_shared)
  target_compile_features(${t} INTERFACE cxx_std_20)
endforeach()
set_target_properties(fixq_shared PROPERTIES EXPORT_NAME fixq VERSION ${PROJECT_VERSION}
  # 0.x: any minor release may change the ABI.
  SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
set_target_properties(fixq_static PROPERTIES EXPORT_NAME fixq_static)

set(FIXQ_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/fixq)
install(TARGETS fixq_shared fixq_static EXPORT fixqTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/fixq DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
install(TARGETS fixq_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT fixqTargets NAMESPACE fixq:: DESTINATION ${FIXQ_INSTALL_CMAKEDIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/fixqConfig.cmake.in
  ${PROJECT_BINARY_DIR}/fixqConfig.cmake INSTALL_DESTINATION ${FIXQ_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/fixqConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/fixqConfig.cmake ${PROJECT_BINARY_DIR}/fixqConfigVersion.cmake
  DESTINATION ${FIXQ_INSTALL_CMAKEDIR})

# fixq.pc finds the prefix from its own folder (pkg-config's ${pcfiledir}), so it stays right
# whatever --prefix the install is given.
set(FIXQ_PC_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
foreach(dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    message(FATAL_ERROR "fixq: CMAKE_INSTALL_${dir}=${CMAKE_INSTALL_${dir}} must be relative to the prefix")
  endif()
endforeach()
file(RELATIVE_PATH FIXQ_PC_TO_PREFIX /prefix/${FIXQ_PC_DIR} /prefix)
# What a static link adds (pkg-config --static): the thread library, and with ONNX import
# Debian's libonnx_proto (no .pc of its own) and protobuf (protobuf.pc).
set(FIXQ_PC_REQUIRES_PRIVATE "")
set(FIXQ_PC_LIBS_PRIVATE -pthread)
if(FIXQ_ONNX)
  set(FIXQ_PC_REQUIRES_PRIVATE protobuf)
  get_target_property(onnx_proto_location onnx_proto LOCATION)
  get_filename_component(onnx_proto_dir ${onnx_proto_location} DIRECTORY)
  set(FIXQ_PC_LIBS_PRIVATE "-L${onnx_proto_dir} -lonnx_proto -pthread")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/fixq.pc.in ${PROJECT_BINARY_DIR}/fixq.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/fixq.pc DESTINATION ${FIXQ_PC_DIR})
