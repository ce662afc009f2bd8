#!/usr/bin/env python3
"""The summary table of scripts/gpu_check.sh: each check's result (exit 1 if any failed), then
the benchmarks of fixq and its peers side by side with the issue's speed targets.

    gpu_summary.py OUT_DIR name=status ...
OUT_DIR holds tests.xml, the sanitizer logs and the bench CSVs that gpu_check.sh wrote.
"""
import csv
import os
import re
import sys
import xml.etree.ElementTree as ET


def rows(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def comments(path):
    if not os.path.exists(path):
        return []
    return [line.rstrip() for line in open(path) if line.startswith("#")]


def main():
    out = sys.argv[1]
    status = dict(a.split("=", 1) for a in sys.argv[2:])
    failed = False
    print("== fixq GPU check ==")
    gpu = open(os.path.join(out, "gpu.txt")).read().strip() if os.path.exists(os.path.join(out, "gpu.txt")) else "?"
    print(f"GPU: {gpu}\n")
    print(f"{'check':<34} result")

    # The GPU tests: every test ran (none skipped) and passed.
    detail = "no tests.xml"
    ok = status.get("tests") == "0"
    xml = os.path.join(out, "tests.xml")
    if os.path.exists(xml):
        root = ET.parse(xml).getroot()
        tests = int(root.get("tests", 0))
        fails = int(root.get("failures", 0)) + int(root.get("errors", 0))
        skipped = sum(1 for c in root.iter("testcase") if c.find("skipped") is not None or c.get("result") == "skipped")
        detail = f"{tests} tests, {fails} failed, {skipped} skipped"
        ok = ok and fails == 0 and skipped == 0 and tests > 0
    failed |= not ok
    print(f"{'GPU tests (GPU vs CPU, bit for bit)':<34} {'PASS' if ok else 'FAIL'}  ({detail})")

    ok = status.get("cli") == "0"
    failed |= not ok
    print(f"{'fixq gru run --device cuda vs CPU':<34} {'PASS' if ok else 'FAIL'}")

    for tool in ("memcheck", "racecheck", "synccheck"):
        log = os.path.join(out, f"sanitizer_{tool}.log")
        text = open(log).read() if os.path.exists(log) else ""
        # memcheck and synccheck end with "ERROR SUMMARY: N errors", racecheck with
        # "RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)"; any is a failure.
        m = re.search(r"(?:ERROR SUMMARY: (\d+) error|RACECHECK SUMMARY: (\d+) hazard)", text)
        errors = int(m.group(1) or m.group(2)) if m else -1
        ok = status.get(tool) == "0" and errors == 0
        failed |= not ok
        print(f"{'compute-sanitizer ' + tool:<34} {'PASS' if ok else 'FAIL'}  "
              f"({'no summary' if errors < 0 else str(errors) + ' errors'})")
    for name in ("bench_gru", "peer_gru", "bench_gemm", "peer_gemm"):
        ok = status.get(name) == "0"
        failed |= not ok
        print(f"{name:<34} {'ran' if ok else 'FAIL'}")

    # GRU: us per step, and fixq against cuDNN fp16 (targets: int8 >= 2x at batch 1 and 16,
    # >= 1.5x at batch 64; int16 >= 1x at batch 1).
    g = {(int(r["H"]), int(r["batch"]), r["impl"]): float(r["us_per_step"])
         for f in ("gru_fixq.csv", "gru_torch.csv") for r in rows(os.path.join(out, f))}
    print("\n== GRU, us per step (one layer, C = H) ==")
    for c in comments(os.path.join(out, "gru_fixq.csv")) + comments(os.path.join(out, "gru_torch.csv")):
        if not c.startswith("# fixq_"):
            print(c)
    impls = ["fixq_int8_cuda", "fixq_int16_cuda", "torch_gru_fp32", "torch_gru_fp16", "torch_gru_bf16"]
    print(f"{'H':>5} {'B':>4} " + " ".join(f"{i:>16}" for i in impls) + "  int8/fp16  target  int16/fp16  target")
    for H, B in sorted({(h, b) for h, b, _ in g}):
        vals = [g.get((H, B, i)) for i in impls]
        line = f"{H:>5} {B:>4} " + " ".join(f"{v:>16.3f}" if v else f"{'-':>16}" for v in vals)
        fp16 = g.get((H, B, "torch_gru_fp16"))
        for impl, need in (("fixq_int8_cuda", 2.0 if B <= 16 else 1.5), ("fixq_int16_cuda", 1.0 if B == 1 else None)):
            mine = g.get((H, B, impl))
            if mine and fp16:
                speed = fp16 / mine
                verdict = "-" if need is None else ("met" if speed >= need else "MISSED")
                line += f"  {speed:>8.2f}x  {verdict:>6}"
            else:
                line += f"  {'-':>9}  {'-':>6}"
        print(line)

    # GEMM + epilogue against _int_mm + torch's epilogue (targets: >= 1.5x at M <= 64,
    # >= 1.0x at M >= 1024), and the fraction of the measured mma.sync int8 peak.
    print("\n== GEMM + epilogue, us per call (N = K = 4096, s8 x s8) ==")
    for c in comments(os.path.join(out, "gemm_fixq.csv")) + comments(os.path.join(out, "gemm_torch.csv")):
        print(c)
    fixq = {(int(r["M"]), r["epilogue"]): r for r in rows(os.path.join(out, "gemm_fixq.csv"))}
    torch = {(int(r["M"]), r["epilogue"]): r for r in rows(os.path.join(out, "gemm_torch.csv"))}
    print(f"{'M':>5} {'epilogue':<20} {'fixq us':>9} {'torch us':>9} {'speedup':>8} {'target':>7} {'fixq TOPS':>10} {'of mma peak':>11}")
    for key in sorted(fixq):
        f, t = fixq[key], torch.get(key)
        line = f"{key[0]:>5} {key[1]:<20} {float(f['us']):>9.2f} "
        if t:
            speed = float(t["us"]) / float(f["us"])
            need = 1.5 if key[0] <= 64 else 1.0
            line += f"{float(t['us']):>9.2f} {speed:>7.2f}x {('met' if speed >= need else 'MISSED'):>7} "
        else:
            line += f"{'-':>9} {'-':>8} {'-':>7} "
        line += f"{float(f['tops']):>10.1f} {100 * float(f['fraction_of_mma_peak']):>10.1f}%"
        print(line)

    print("\nRESULT:", "FAIL (a check above failed; logs in " + out + ")" if failed else "PASS (every GPU output equals the CPU's; sanitizers clean)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
