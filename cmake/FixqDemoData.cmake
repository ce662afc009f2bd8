# fixq_demo_data(MODEL FILE...): the files of data/MODEL/ that a demo of `fixq demo` reads,
# copied into <build>/share/fixq/MODEL/ on every build (so build/bin/fixq finds them as an
# installed fixq does) and installed into <prefix>/share/fixq/MODEL/ (cli/demo_data.h).
# The copies are made at build time, not at configure time, so an edited file reaches the
# build on the next build.
include_guard(GLOBAL)
include(GNUInstallDirs)
add_custom_target(fixq_demo_data ALL)
function(fixq_demo_data model)
  set(out_dir ${CMAKE_BINARY_DIR}/${CMAKE_INSTALL_DATADIR}/fixq/${model})
  set(copies)
  set(sources)
  foreach(name IN LISTS ARGN)
    set(src ${PROJECT_SOURCE_DIR}/data/${model}/${name})
    if(NOT EXISTS ${src})
      message(FATAL_ERROR "fixq_demo_data(${model}): ${src} does not exist")
    endif()
    add_custom_command(OUTPUT ${out_dir}/${name}
      COMMAND ${CMAKE_COMMAND} -E copy_if_different ${src} ${out_dir}/${name}
      DEPENDS ${src}
      COMMENT "Copying data/${model}/${name}")
    list(APPEND copies ${out_dir}/${name})
    list(APPEND sources ${src})
  endforeach()
  add_custom_target(fixq_demo_data_${model} DEPENDS ${copies})
  add_dependencies(fixq_demo_data fixq_demo_data_${model})
  install(FILES ${sources} DESTINATION ${CMAKE_INSTALL_DATADIR}/fixq/${model})
endfunction()
