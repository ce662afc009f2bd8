#!/usr/bin/env python3
"""The aarch64 build's object files against the features their family checks at run time.

The aarch64 counterpart of isa_objects_check.py. Each kernel file is compiled with exactly
its family's -march (cmake/FixqIsa.cmake) and src/cpu/cpu_aarch64.cpp runs it only where
the CPU reports that family's features (HWCAP). This disassembles every object file and
fails when one holds an instruction outside its family's set: an SDOT in a neon file would
die with SIGILL on a Cortex-A72, an SMMLA in a dotprod file on a Neoverse N1. Advanced SIMD
itself is baseline on aarch64 (every file may use it), except in *_intonly.cpp files,
which may use no floating-point or vector register at all. Functions with vague linkage
(COMDAT groups) get only what a plain file may use, since the linker keeps one copy for
every caller.

Usage: isa_objects_check_aarch64.py OBJECT_LIST_FILE OBJDUMP READELF CXX
The script first proves that it can fail: it compiles small probes with forbidden
instructions (CXX, the cross compiler) and expects each to be reported.
"""
import os
import re
import subprocess
import sys
import tempfile

# Mnemonic classes, matched on objdump's output (operands included).
CLASSES = {
    "i8mm": re.compile(r"^\s*(smmla|ummla|usmmla|usdot|sudot)\b"),
    "dotprod": re.compile(r"^\s*(sdot|udot)\b"),
    "bf16": re.compile(r"^\s*(bfdot|bfmmla|bfmlal[bt]|bfcvt\w*)\b"),
    "sve": re.compile(r"\bz[0-9]+\.[bhsdq]\b|\bp[0-9]+/[zm]\b|^\s*(ptrue|whilelo|whilelt|rdvl|addvl)\b"),
    # any floating-point / Advanced SIMD register (for -mgeneral-regs-only files)
    "simd": re.compile(r"\b[vqdsbh][0-9]+(\.[0-9]*[bhsd])?\b|\bfpcr\b|\bfpsr\b"),
}

# What each file suffix may use.
ALLOWED = {
    "intonly": set(),
    "plain": {"simd"},
    "neon": {"simd"},
    "dotprod": {"simd", "dotprod"},
    "i8mm": {"simd", "dotprod", "i8mm"},
    "armbf16": {"simd", "dotprod", "bf16"},
}


def family(path):
    m = re.search(r"_(neon|dotprod|i8mm|armbf16|intonly)\.cpp\.o$", os.path.basename(path))
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
            ins = line.split(":", 1)[1].strip()
            # Branch targets ("b.ne d14 <f+0x10>") and comments are not operands: a hex
            # address such as d14 must not read as a register.
            ins = re.sub(r"\s*//.*$", "", ins)
            ins = re.sub(r"\b[0-9a-f]+ <[^>]*>", "", ins)
            sections[current].append(ins)
    return sections


def comdat_sections(obj, readelf):
    out = subprocess.run([readelf, "-g", "-W", obj], check=True, capture_output=True, text=True).stdout
    return {m.group(1) for m in re.finditer(r"^\s+\[\s*\d+\]\s+(\.text\S*)", out, re.M)}


def check(obj, objdump, readelf, fam=None):
    """Problems of one object file: (section, class, example instruction)."""
    fam = fam or family(obj)
    problems = []
    comdat = comdat_sections(obj, readelf)
    for section, instructions in disassemble(obj, objdump).items():
        limit = ALLOWED["plain"] if (section in comdat and fam != "intonly") else ALLOWED[fam]
        found = {}
        for ins in instructions:
            for cls, rx in CLASSES.items():
                if rx.search(ins):
                    found.setdefault(cls, ins)
        for cls, example in found.items():
            if cls not in limit:
                problems.append((f"{section} (COMDAT)" if section in comdat else section, cls, example))
    return problems


def self_test(objdump, readelf, cxx):
    probes = [
        ("neon", "-march=armv8.2-a+dotprod",
         "int32x4_t f(int32x4_t a, int8x16_t b, int8x16_t c) { return vdotq_s32(a, b, c); }"),
        ("dotprod", "-march=armv8.2-a+dotprod+i8mm",
         "int32x4_t f(int32x4_t a, int8x16_t b, int8x16_t c) { return vmmlaq_s32(a, b, c); }"),
        ("dotprod", "-march=armv8.2-a+dotprod+bf16",
         "float32x4_t f(float32x4_t a, bfloat16x8_t b, bfloat16x8_t c) { return vbfdotq_f32(a, b, c); }"),
        ("i8mm", "-march=armv8.2-a+dotprod+i8mm+bf16",
         "float32x4_t f(float32x4_t a, bfloat16x8_t b, bfloat16x8_t c) { return vbfmmlaq_f32(a, b, c); }"),
        ("intonly", "-march=armv8-a", "int32x4_t f(int32x4_t a, int32x4_t b) { return vaddq_s32(a, b); }"),
        ("dotprod", "-march=armv8.2-a+dotprod",
         "template <int N> __attribute__((noinline)) int32x4_t g(int32x4_t a, int8x16_t b) { return vdotq_s32(a, b, b); }\n"
         "int32x4_t f(int32x4_t a, int8x16_t b) { return g<3>(a, b); }"),
    ]
    with tempfile.TemporaryDirectory() as d:
        for fam, flags, body in probes:
            src, obj = os.path.join(d, "probe.cpp"), os.path.join(d, "probe.o")
            with open(src, "w") as f:
                f.write("#include <arm_neon.h>\n" + body + "\n")
            subprocess.run([cxx, "-O2", "-c", *flags.split(), src, "-o", obj], check=True)
            if not check(obj, objdump, readelf, fam):
                print(f"isa_objects_check_aarch64: self-test failed: a {fam} file compiled with {flags} was not reported")
                return False
    return True


def main():
    list_file, objdump, readelf, cxx = sys.argv[1:5]
    if not self_test(objdump, readelf, cxx):
        return 1
    objects = [line.strip() for line in open(list_file) if line.strip()]
    if not objects:
        print("isa_objects_check_aarch64: no object files listed")
        return 1
    failures, counts = 0, {}
    for obj in objects:
        counts[family(obj)] = counts.get(family(obj), 0) + 1
        for where, cls, example in check(obj, objdump, readelf):
            failures += 1
            print(f"{obj}: {where}: {cls} instruction outside the {family(obj)} family's features: {example}")
    print("isa_objects_check_aarch64: " + ", ".join(f"{n} {f} files" for f, n in sorted(counts.items())) +
          (f"; {failures} problems" if failures else "; every instruction inside its family's features"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
