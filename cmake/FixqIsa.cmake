# The one rule from a file's name to its compiler flags, used by every target:
#   *_avx2.cpp         AVX2 + FMA + F16C + BMI2                      (Isa::Avx2)
#   *_avx512.cpp       + AVX-512 F/BW/DQ/VL + VNNI                   (Isa::Avx512)
#   *_avx512vbmi.cpp   + AVX512_VBMI + GFNI                          (Isa::Avx512Vbmi)
#   *_avx512bf16.cpp   + AVX512_BF16                                 (Isa::Avx512Bf16)
#   *_amx.cpp          + AMX-TILE and AMX-INT8                       (Isa::Amx)
#   *_intonly.cpp      -mgeneral-regs-only: code that must never compute with floats (the
#                      compiler rejects any float or double operation, which proves it)
# Each family's files get exactly the features src/cpu checks before running them, so a
# file can never hold an instruction of a feature its family does not check
# (tests/cpu/isa_objects_check.py verifies the object files).
set(FIXQ_ISA_FLAGS_avx2 -mavx2 -mfma -mf16c -mbmi2)
set(FIXQ_ISA_FLAGS_avx512 ${FIXQ_ISA_FLAGS_avx2} -mavx512f -mavx512bw -mavx512dq -mavx512vl -mavx512vnni)
set(FIXQ_ISA_FLAGS_avx512vbmi ${FIXQ_ISA_FLAGS_avx512} -mavx512vbmi -mgfni)
set(FIXQ_ISA_FLAGS_avx512bf16 ${FIXQ_ISA_FLAGS_avx512} -mavx512bf16)
set(FIXQ_ISA_FLAGS_amx ${FIXQ_ISA_FLAGS_avx512} -mamx-tile -mamx-int8)
# GCC 12's own avx512fintrin.h trips -W(maybe-)uninitialized (GCC PR 105593).
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set(FIXQ_ISA_WARNING_FIXES -Wno-maybe-uninitialized -Wno-uninitialized)
endif()

# The families are the FIXQ_ISA_FLAGS_<family> variables above: a new family is one more
# such line (and its files), nothing else in the build.
get_cmake_property(fixq_all_variables VARIABLES)
set(FIXQ_ISA_FAMILIES)
foreach(v IN LISTS fixq_all_variables)
  if(v MATCHES "^FIXQ_ISA_FLAGS_(.+)$")
    list(APPEND FIXQ_ISA_FAMILIES ${CMAKE_MATCH_1})
  endif()
endforeach()
list(JOIN FIXQ_ISA_FAMILIES "|" fixq_isa_alternatives)

# The family suffix of a source file name (avx2, avx512, avx512vbmi, ...), or "".
function(fixq_isa_of src out)
  if(src MATCHES "_(${fixq_isa_alternatives})\\.cpp$")
    set(${out} ${CMAKE_MATCH_1} PARENT_SCOPE)
  else()
    set(${out} "" PARENT_SCOPE)
  endif()
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
