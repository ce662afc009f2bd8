# The one rule from a file's name to its compiler flags, used by every target. The families
# are those of the target architecture (cmake/FixqArch.cmake reads them from
# include/fixq/cpu.h); each has its flags here.
# x86-64:
#   *_avx2.cpp         AVX2 + FMA + F16C + BMI2                      (Isa::Avx2)
#   *_avx512.cpp       + AVX-512 F/BW/DQ/VL + VNNI                   (Isa::Avx512)
#   *_avx512vbmi.cpp   + AVX512_VBMI + GFNI                          (Isa::Avx512Vbmi)
#   *_avx512bf16.cpp   + AVX512_BF16                                 (Isa::Avx512Bf16)
#   *_amx.cpp          + AMX-TILE and AMX-INT8                       (Isa::Amx)
# aarch64:
#   *_neon.cpp         Armv8.0-A with Advanced SIMD, nothing newer   (Isa::Neon)
#   *_dotprod.cpp      + DotProd (SDOT/UDOT)                         (Isa::Dotprod)
#   *_i8mm.cpp         + I8MM (SMMLA/UMMLA/USMMLA)                   (Isa::I8mm)
#   *_armbf16.cpp      + DotProd and BF16 (BFDOT/BFMMLA)             (Isa::ArmBf16)
# Any architecture:
#   *_intonly.cpp      -mgeneral-regs-only: code that must never compute with floats (the
#                      compiler rejects any float or double operation, which proves it)
# Files with a suffix of another architecture's family are not compiled at all.
# Each family's files get exactly the features src/cpu checks before running them, so a
# file can never hold an instruction of a feature its family does not check
# (tests/cpu/isa_objects_check.py verifies the object files).
include(${CMAKE_CURRENT_LIST_DIR}/FixqArch.cmake)
if(FIXQ_ARCH STREQUAL "x86_64")
  set(FIXQ_ISA_FLAGS_avx2 -mavx2 -mfma -mf16c -mbmi2)
  set(FIXQ_ISA_FLAGS_avx512 ${FIXQ_ISA_FLAGS_avx2} -mavx512f -mavx512bw -mavx512dq -mavx512vl -mavx512vnni)
  set(FIXQ_ISA_FLAGS_avx512vbmi ${FIXQ_ISA_FLAGS_avx512} -mavx512vbmi -mgfni)
  set(FIXQ_ISA_FLAGS_avx512bf16 ${FIXQ_ISA_FLAGS_avx512} -mavx512bf16)
  set(FIXQ_ISA_FLAGS_amx ${FIXQ_ISA_FLAGS_avx512} -mamx-tile -mamx-int8)
elseif(FIXQ_ARCH STREQUAL "aarch64")
  set(FIXQ_ISA_FLAGS_neon -march=armv8-a)
  set(FIXQ_ISA_FLAGS_dotprod -march=armv8.2-a+dotprod)
  set(FIXQ_ISA_FLAGS_i8mm -march=armv8.2-a+dotprod+i8mm)
  set(FIXQ_ISA_FLAGS_armbf16 -march=armv8.2-a+dotprod+bf16)
endif()
# GCC 12's own avx512fintrin.h trips -W(maybe-)uninitialized (GCC PR 105593).
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set(FIXQ_ISA_WARNING_FIXES -Wno-maybe-uninitialized -Wno-uninitialized)
endif()
foreach(family IN LISTS FIXQ_ISA_FAMILIES)
  if(NOT DEFINED FIXQ_ISA_FLAGS_${family})
    message(FATAL_ERROR "the family ${family} of include/fixq/cpu.h has no FIXQ_ISA_FLAGS_${family} in cmake/FixqIsa.cmake")
  endif()
endforeach()
list(JOIN FIXQ_ISA_FAMILIES "|" fixq_isa_alternatives)
list(JOIN FIXQ_FOREIGN_ISA_FAMILIES "|" fixq_foreign_isa_alternatives)

# The family suffix of a source file name (avx2, avx512, avx512vbmi, ...), or "".
function(fixq_isa_of src out)
  if(fixq_isa_alternatives AND src MATCHES "_(${fixq_isa_alternatives})\\.cpp$")
    set(${out} ${CMAKE_MATCH_1} PARENT_SCOPE)
  else()
    set(${out} "" PARENT_SCOPE)
  endif()
endfunction()

# Removes from the list `var` the files of another architecture's families (*_avx2.cpp on
# aarch64, *_neon.cpp on x86-64, ...).
function(fixq_drop_foreign_isa_files var)
  if(fixq_foreign_isa_alternatives)
    list(FILTER ${var} EXCLUDE REGEX "_(${fixq_foreign_isa_alternatives})\\.cpp$")
  endif()
  set(${var} ${${var}} PARENT_SCOPE)
endfunction()

# Sets the per-file flags of ARGN's sources in the calling directory.
function(fixq_set_isa_flags)
  foreach(src IN LISTS ARGN)
    fixq_isa_of(${src} isa)
    if(src MATCHES "_intonly\\.cpp$")
      # clang (unlike GCC) rejects libstdc++'s long double under -mgeneral-regs-only, so the
      # clang fuzz build goes without it; the GCC builds still prove these files float-free.
      if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
        set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS "-mgeneral-regs-only")
      endif()
    elseif(isa)
      set(flags ${FIXQ_ISA_FLAGS_${isa}})
      if(isa MATCHES "^(avx512|amx)")
        list(APPEND flags ${FIXQ_ISA_WARNING_FIXES})
      endif()
      set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS "${flags}")
    endif()
  endforeach()
endfunction()
