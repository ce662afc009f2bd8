#!/usr/bin/env python3
"""Checks the library's object files against the features their family checks at run time.

Each kernel file is compiled with exactly its family's -m flags (cmake/FixqIsa.cmake) and
src/cpu runs it only where the CPU has that family's features. This test disassembles
every object file with objdump and fails when one holds an instruction outside its
family's feature set: an AVX-512 file with a BF16 or VBMI instruction would die with
SIGILL on Ice Lake or Cascade Lake (VNNI without BF16, or without VBMI).

It also checks the functions with vague linkage (inline functions and template
instantiations in COMDAT groups) of every family's files: the linker keeps one copy of
each for the whole program, so such a copy may only use baseline x86-64 instructions, or
a plain caller could end up running AVX code.

Usage: isa_objects_check.py OBJECT_LIST_FILE OBJDUMP CXX
  OBJECT_LIST_FILE  one object file path per line (CMake's $<TARGET_OBJECTS:fixq_objects>)
The script first proves that it can fail: it compiles small probes with forbidden
instructions (CXX) and expects each to be reported.
"""
import os
import re
import subprocess
import sys
import tempfile

# Mnemonic classes, matched on objdump's AT&T output (operands included).
CLASSES = {
    "bf16": re.compile(r"\b(vdpbf16ps|vcvtne2ps2bf16|vcvtneps2bf16)\b"),
    "vbmi": re.compile(r"\b(vpermb|vpermi2b|vpermt2b|vpmultishiftqb)\b"),
    "gfni": re.compile(r"\bv?gf2p8\w*"),
    "amx": re.compile(r"\b(ldtilecfg|sttilecfg|tileloadd\w*|tilestored|tilerelease|tilezero|tdp\w+)\b"),
    "other-avx512": re.compile(  # AVX-512 extensions no family checks
        r"\b(vpcompressb|vpcompressw|vpexpandb|vpexpandw|vpshld[vwdq]*|vpshrd[vwdq]*|vpopcnt[bwdq]|"
        r"vpshufbitqmb|vpmadd52[lh]uq|vaes\w*|vpclmulqdq|vp2intersect[dq]|vcvt\w*ph\w*x|v\w+sh)\b"),
    "avx512": re.compile(r"%zmm|%k[0-7]|%[xy]mm(1[6-9]|2[0-9]|3[01])\b|\b(vpternlog[dq]|vperm[it]2\w+|vpmov[dq][bw]|"
                         r"vpmovq[bwd]|vpmovs[dqw][bwd]|vpmovus[dqw][bwd]|vpdpbusds?|vpdpwssds?|vpro[lr]v?[dq]|vpsrav[wq]|vpsraq|"
                         r"vpmullq|vpmax[su]q|vpmin[su]q|vpabsq|vrndscale\w+|vcvtt?p[sd]2u?qq|vcvtu?qq2p[sd]|"
                         r"vcvtt?p[sd]2udq|vcvtudq2p[sd]|vgetexp\w+|vgetmant\w+|vscalef\w+|vfixupimm\w+|vrange\w+|"
                         r"vreduce\w+|vfpclass\w+|vpconflict[dq]|vplzcnt[dq]|vexp2\w+|vrcp14\w+|vrsqrt14\w+|"
                         r"v(extract|insert)[if](32x4|32x8|64x2|64x4)|vbroadcast[if](32x[248]|64x[24])|"
                         r"vpbroadcastmw2d|vpbroadcastmb2q|valign[dq]|vblendm\w+|vpblendm\w+|vpcmpu?[bwdq]\b|"
                         r"vpermw|vpsllvw|vpsrlvw|vpsravw|vdbpsadbw|vpmovm2\w+|vpmov\w+2m)\b"),
    "avx": re.compile(r"^\s*v[a-z]"),  # any VEX / EVEX instruction
    "sse": re.compile(r"%xmm|%ymm|%zmm"),  # any vector register (for -mgeneral-regs-only files)
}

# What each file suffix may use.
ALLOWED = {
    "intonly": set(),
    "plain": {"sse"},
    "avx2": {"sse", "avx"},
    "avx512": {"sse", "avx", "avx512"},
    "avx512vbmi": {"sse", "avx", "avx512", "vbmi", "gfni"},  # the family checks AVX512_VBMI and GFNI
    "avx512bf16": {"sse", "avx", "avx512", "bf16"},
    "amx": {"sse", "avx", "avx512", "amx"},  # AMX-TILE and AMX-INT8 on top of the AVX-512 family
}


def family(path):
    name = os.path.basename(path)
    m = re.search(r"_(avx2|avx512|avx512vbmi|avx512bf16|amx|intonly)\.cpp\.o$", name)
    return m.group(1) if m else "plain"


def disassemble(obj, objdump):
    """{section: [instruction lines]} of the executable sections."""
    out = subprocess.run([objdump, "-d", "--no-show-raw-insn", "-w", obj], check=True, capture_output=True, text=True).stdout
    sections, current = {}, None
    for line in out.splitlines():
        m = re.match(r"Disassembly of section (\S+):", line)
        if m:
            current = m.group(1)
            sections.setdefault(current, [])
        elif current and re.match(r"\s+[0-9a-f]+:\s", line):
            sections[current].append(line.split(":", 1)[1].strip())
    return sections


def local_symbols(obj):
    """Names of the object's symbols of LOCAL binding."""
    out = subprocess.run(["readelf", "-s", "-W", obj], check=True, capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[4] == "LOCAL":
            names.add(f[7])
    return names


def comdat_sections(obj, objdump):
    """Executable sections that belong to COMDAT groups (vague linkage). Other section
    groups, and COMDAT groups keyed by a symbol of LOCAL binding, are never merged with
    another file's: clang's coverage instrumentation (-fsanitize=fuzzer-no-link) puts every
    function of internal linkage in such a group with its __sancov sections."""
    out = subprocess.run(["readelf", "-g", "-W", obj], check=True, capture_output=True, text=True).stdout
    local = local_symbols(obj)
    sections, shared = set(), True
    for line in out.splitlines():
        g = re.match(r"^\s*(COMDAT )?group section \[\s*\d+\] `[^']*' \[([^\]]+)\]", line)
        if g:
            shared = g.group(1) is not None and g.group(2) not in local
            continue
        m = re.match(r"^\s+\[\s*\d+\]\s+(\.text\S*)", line)
        if m and shared:
            sections.add(m.group(1))
    return sections


def classes_of(instructions):
    found = {}
    for ins in instructions:
        for cls, rx in CLASSES.items():
            if rx.search(ins):
                found.setdefault(cls, ins)
    return found


def check(obj, objdump, fam=None):
    """Problems of one object file: (section, class, example instruction)."""
    fam = fam or family(obj)
    allowed = ALLOWED[fam]
    problems = []
    comdat = comdat_sections(obj, objdump)
    for section, instructions in disassemble(obj, objdump).items():
        found = classes_of(instructions)
        # Functions every translation unit may share get only what a plain file may use.
        limit = ALLOWED["plain"] if (section in comdat and fam != "intonly") else allowed
        for cls, example in found.items():
            if cls not in limit and not (cls == "sse" and "avx" in limit):
                where = f"{section} (COMDAT, shared between files)" if section in comdat else section
                problems.append((where, cls, example))
    return problems


def self_test(objdump, cxx):
    """The checker must report each of these probes; else it could not fail."""
    probes = [
        ("avx512", "-mavx512f -mavx512bf16 -mavx512vl", "__m512 f(__m512 a, __m512bh b) { return _mm512_dpbf16_ps(a, b, b); }"),
        ("avx512", "-mavx512f -mavx512bw -mavx512vbmi", "__m512i f(__m512i a, __m512i b) { return _mm512_permutexvar_epi8(a, b); }"),
        ("avx512", "-mavx512f -mavx512bw -mgfni", "__m512i f(__m512i a, __m512i b) { return _mm512_gf2p8affine_epi64_epi8(a, b, 0); }"),
        ("avx2", "-mavx512f", "__m512i f(__m512i a, __m512i b) { return _mm512_add_epi32(a, b); }"),
        ("plain", "-mavx2", "__m256i f(__m256i a, __m256i b) { return _mm256_add_epi32(a, b); }"),
        ("avx512", "-mavx512f -mamx-tile", "void f() { _tile_zero(0); }"),
        ("avx512", "-mavx512f -mavx512bf16 -mavx512vl",
         "inline __m512 g(__m512 a, __m512bh b) { return _mm512_dpbf16_ps(a, b, b); }\n__m512 f(__m512 a, __m512bh b) { return g(a, b); }"),
    ]
    with tempfile.TemporaryDirectory() as d:
        for fam, flags, body in probes:
            src, obj = os.path.join(d, "probe.cpp"), os.path.join(d, "probe.o")
            with open(src, "w") as f:
                f.write("#include <immintrin.h>\n" + body + "\n")
            subprocess.run([cxx, "-O2", "-c", *flags.split(), src, "-o", obj], check=True)
            if not check(obj, objdump, fam):
                print(f"isa_objects_check: self-test failed: a {fam} file compiled with {flags} was not reported")
                return False
    # A COMDAT function with AVX in an AVX2 file must be reported too.
    with tempfile.TemporaryDirectory() as d:
        src, obj = os.path.join(d, "probe.cpp"), os.path.join(d, "probe.o")
        with open(src, "w") as f:
            f.write("#include <immintrin.h>\n"
                    "template <int N> __attribute__((noinline)) __m256i add(__m256i a, __m256i b) { return _mm256_add_epi32(a, b); }\n"
                    "__m256i f(__m256i a, __m256i b) { return add<3>(a, b); }\n")
        subprocess.run([cxx, "-O2", "-c", "-mavx2", src, "-o", obj], check=True)
        if not any("COMDAT" in p[0] for p in check(obj, objdump, "avx2")):
            print("isa_objects_check: self-test failed: an AVX2 template instantiation (COMDAT) was not reported")
            return False
    return True


def main():
    list_file, objdump, cxx = sys.argv[1:4]
    if not self_test(objdump, cxx):
        return 1
    objects = [line.strip() for line in open(list_file) if line.strip()]
    if not objects:
        print("isa_objects_check: no object files listed")
        return 1
    failures = 0
    counts = {}
    for obj in objects:
        counts[family(obj)] = counts.get(family(obj), 0) + 1
        for where, cls, example in check(obj, objdump):
            failures += 1
            print(f"{obj}: {where}: {cls} instruction outside the {family(obj)} family's features: {example}")
    print("isa_objects_check: " + ", ".join(f"{n} {f} files" for f, n in sorted(counts.items())) +
          (f"; {failures} problems" if failures else "; every instruction inside its family's features"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
