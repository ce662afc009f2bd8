#!/usr/bin/env python3
"""The summary of scripts/gpu_check.sh, rewritten after every step: each step's verdict from
its log, then the benchmarks of fixq and its peers side by side with the speed targets.

    gpu_summary.py WORK_DIR OUT_DIR
WORK_DIR holds steps.tsv and info.tsv (gpu_check.sh's record of the run) and the steps' logs
(tests.xml, tests.log, cli.log, memcheck.log, ...); OUT_DIR the bench CSVs. Prints the table;
its last line is "RESULT: PASS|FAIL|INCOMPLETE ...", which gpu_check.sh turns into its exit
status. A verdict is one of
    PASS        the step ran and showed what it is there to show;
    FAIL        it showed a fault of fixq (or of the bundle, or of the run's plan);
    INCOMPLETE  it could not show it (no GPU, no sanitizer support, out of time, a peer missing);
    skipped     not run in a dry run, which uses no GPU (counted as neither).
"""
import csv
import os
import re
import sys
import xml.etree.ElementTree as ET

PASS, FAIL, INCOMPLETE, SKIPPED = "PASS", "FAIL", "INCOMPLETE", "skipped"
GPU_SKIP = "no usable GPU"  # how FIXQ_REQUIRE_GPU (tests/cuda/gpu_test_util.h) skips a test


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def tsv(path):
    return [line.rstrip("\n").split("\t") for line in read(path).splitlines() if line.strip()]


def rows(path):
    lines = [line for line in read(path).splitlines() if line and not line.startswith("#")]
    out = []
    for r in csv.DictReader(lines):
        if all(v not in (None, "") for v in r.values()):  # a row cut off mid-line is left out
            out.append(r)
    return out


def comments(path):
    return [line for line in read(path).splitlines() if line.startswith("#")]


def last_line(text, pattern=None):
    lines = [l for l in text.splitlines() if l.strip() and (pattern is None or re.search(pattern, l))]
    return lines[-1].strip() if lines else ""


def gtest(work, gpu):
    """Verdict of the GPU tests from tests.xml (or, cut off, from tests.log)."""
    xml = os.path.join(work, "tests.xml")
    log = read(os.path.join(work, "tests.log"))
    if not os.path.exists(xml):
        started = last_line(log, r"^\[ RUN      \]")
        return FAIL, "no tests.xml" + (f"; the last test started: {started[12:].strip()}" if started else "")
    try:
        root = ET.parse(xml).getroot()
    except ET.ParseError as e:
        return FAIL, f"tests.xml unreadable ({e})"
    failed, skipped, expected_skips, total = [], [], 0, 0
    for case in root.iter("testcase"):
        total += 1
        name = f"{case.get('classname')}.{case.get('name')}"
        if case.find("failure") is not None or case.find("error") is not None:
            failed.append(name)
        skip = case.find("skipped")
        if skip is not None or case.get("result") == "skipped":
            message = "" if skip is None else skip.get("message", "") + (skip.text or "")
            if not gpu and GPU_SKIP in message:
                expected_skips += 1
            else:
                skipped.append(name)
    detail = f"{total} tests, {len(failed)} failed, {len(skipped) + expected_skips} skipped"
    if failed:
        return FAIL, detail + ": " + ", ".join(failed[:6]) + (" ..." if len(failed) > 6 else "")
    if skipped:
        # On a GPU every test runs: a skip there is a GPU test that proved nothing.
        return FAIL, detail + "; skipped: " + ", ".join(skipped[:6]) + (" ..." if len(skipped) > 6 else "")
    if total == 0:
        return FAIL, "no tests ran"
    if not gpu:
        return PASS, detail + f" ({expected_skips} need a GPU; the {total - expected_skips} host-side ones passed)"
    return PASS, detail


def sanitizer(tool, text, rc):
    if re.search(r"Device not supported|not supported on this (device|platform)", text):
        return INCOMPLETE, "compute-sanitizer cannot use this GPU here: " + last_line(text, "not supported")
    if tool == "racecheck":
        m = re.search(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)", text)
        count = int(m.group(1)) if m else None
        what = f"{m.group(2)} errors, {m.group(3)} warnings" if m else "no summary"
    else:
        m = re.search(r"ERROR SUMMARY: (\d+) errors?", text)
        count = int(m.group(1)) if m else None
        what = f"{count} errors" if m else "no summary"
    if count is None:
        return FAIL, f"no sanitizer summary (exit {rc}): " + last_line(text)[:120]
    if count > 0 or rc != "0":
        return FAIL, what + ("" if rc == "0" else f"; exit {rc}" + (" (sanitizer errors)" if rc == "99" else " (a test failed)"))
    return PASS, what


def verdict(name, state, rc, note, work, out, mode, gpu):
    log = read(os.path.join(work, f"{name}.log"))
    if state == "pending":
        return INCOMPLETE, "not reached: the run ended before it"
    if state == "running":
        return FAIL, f"cut off while running ({note}): the run was stopped from outside"
    if state == "skipped":
        return (SKIPPED if mode == "dry-run" and "dry run" in note else INCOMPLETE), note
    if state == "timeout":
        if name.startswith(("bench_", "peer_")):
            csv_name = {"bench_gru": "gru_fixq", "peer_gru": "gru_torch", "bench_gemm": "gemm_fixq", "peer_gemm": "gemm_torch"}[name]
            return INCOMPLETE, f"{note}; {len(rows(os.path.join(out, csv_name + '.csv')))} rows measured"
        if name == "tests":
            return FAIL, note + "; " + gtest(work, gpu)[1]
        return FAIL, note
    if name == "bundle":
        if rc != "0":
            return FAIL, last_line(log)
        size = last_line(log, "MiB that travel")
        return PASS, (last_line(log, "^BUILT: ")[7:] + "; " + size.replace("the bundle is ", "")).strip("; ")
    if name == "gpu":
        line = last_line(log, r"^cuda ")
        return (PASS if gpu else INCOMPLETE), (line or last_line(log))[:150]
    if name == "tests":
        v, detail = gtest(work, gpu)
        if rc != "0" and v == PASS:
            v, detail = FAIL, detail + f"; exit {rc}"
        if v == PASS and not gpu and mode != "dry-run":
            v = INCOMPLETE  # the host-side tests alone are not the GPU check
        return v, detail
    if name == "cli":
        if rc != "0":
            return FAIL, last_line(log)[:150]
        if gpu:
            ok = "byte for byte" in log  # the GPU branch of the test, not its no-GPU one
            return (PASS if ok else FAIL), ("GPU outputs equal the CPU's" if ok else "the GPU branch did not run")
        ok = "no GPU here" in log
        return (PASS if ok and mode == "dry-run" else INCOMPLETE if ok else FAIL), (
            "the no-GPU branch: one-line errors, no output files" if ok else last_line(log)[:150])
    if name in ("memcheck", "racecheck", "synccheck"):
        return sanitizer(name, log, rc)
    if name.startswith(("bench_", "peer_")):
        csv_name = {"bench_gru": "gru_fixq", "peer_gru": "gru_torch", "bench_gemm": "gemm_fixq", "peer_gemm": "gemm_torch"}[name]
        n = len(rows(os.path.join(out, csv_name + ".csv")))
        if rc == "0":
            return PASS, f"{n} rows"
        # A peer that cannot run (torch missing or without CUDA) leaves fixq's own result intact.
        return (INCOMPLETE if name.startswith("peer_") else FAIL), f"exit {rc} after {n} rows: " + last_line(log)[:120]
    return (PASS if rc == "0" else FAIL), f"exit {rc}"


def main():
    work, out = sys.argv[1], sys.argv[2]
    info = {}
    for fields in tsv(os.path.join(work, "info.tsv")):
        if len(fields) >= 2:
            info[fields[0]] = fields[1]
    mode = info.get("mode", "gpu")
    gpu = "no_gpu" not in info
    lines = []
    title = ("dry run: no GPU used" if mode == "dry-run" else
             info["gpu"] if gpu and "gpu" in info else "no GPU: " + info.get("no_gpu", "?"))
    lines.append(f"== fixq GPU check ({title}) ==")
    if "stale" in info:
        lines.append("!!! WARNING: THE BUNDLE IS NOT HEAD: " + info["stale"])
    lines.append(f"bundle: {info.get('bundle', '?')} ({info.get('built', '?')}); sources here: {info.get('sources', '?')}")
    lines.append(f"budget: the steps' limits add up to {info.get('caps', '?')} s of {info.get('budget', '?')} s; "
                 f"started {info.get('started', '?')}")
    lines.append("")
    lines.append(f"{'step':<11} {'limit':>5} {'took':>5}  result")
    verdicts = []
    for fields in tsv(os.path.join(work, "steps.tsv")):
        fields += [""] * (6 - len(fields))
        name, limit, state, rc, took, note = fields[:6]
        v, detail = verdict(name, state, rc, note, work, out, mode, gpu)
        verdicts.append(v)
        lines.append(f"{name:<11} {limit + 's':>5} {(took + 's') if took else '-':>5}  {v}" + (f"  ({detail})" if detail else ""))
    problems = [info[k] for k in ("plan_error", "out_error") if k in info]
    for p in problems:
        lines.append("FAIL: " + p)

    # GRU: us per step, and fixq against cuDNN fp16 (targets: int8 >= 2x at batch 1 and 16,
    # >= 1.5x at batch 64; int16 >= 1x at batch 1).
    gru_files = [os.path.join(out, f) for f in ("gru_fixq.csv", "gru_torch.csv")]
    g = {}
    for f in gru_files:
        for r in rows(f):
            try:
                g[(int(r["H"]), int(r["batch"]), r["impl"])] = float(r["us_per_step"])
            except (KeyError, ValueError):
                continue
    if g:
        lines.append("\n== GRU, us per step (one layer, C = H) ==")
        lines += [c for f in gru_files for c in comments(f) if not c.startswith("# fixq_")]
        impls = ["fixq_int8_cuda", "fixq_int16_cuda", "torch_gru_fp32", "torch_gru_fp16", "torch_gru_bf16"]
        lines.append(f"{'H':>5} {'B':>4} " + " ".join(f"{i:>16}" for i in impls) + "  int8/fp16  target  int16/fp16  target")
        for H, B in sorted({(h, b) for h, b, _ in g}):
            line = f"{H:>5} {B:>4} " + " ".join(f"{g[(H, B, i)]:>16.3f}" if (H, B, i) in g else f"{'-':>16}" for i in impls)
            fp16 = g.get((H, B, "torch_gru_fp16"))
            for impl, need in (("fixq_int8_cuda", 2.0 if B <= 16 else 1.5), ("fixq_int16_cuda", 1.0 if B == 1 else None)):
                mine = g.get((H, B, impl))
                if mine and fp16:
                    verdict_text = "-" if need is None else ("met" if fp16 / mine >= need else "MISSED")
                    line += f"  {fp16 / mine:>8.2f}x  {verdict_text:>6}"
                else:
                    line += f"  {'-':>9}  {'-':>6}"
            lines.append(line)

    # GEMM + epilogue against _int_mm + torch's epilogue (targets: >= 1.5x at M <= 64,
    # >= 1.0x at M >= 1024), and the fraction of the measured mma.sync int8 peak.
    gemm_files = [os.path.join(out, f) for f in ("gemm_fixq.csv", "gemm_torch.csv")]
    fixq = {(int(r["M"]), r["epilogue"]): r for r in rows(gemm_files[0]) if r.get("M", "").isdigit()}
    torch = {(int(r["M"]), r["epilogue"]): r for r in rows(gemm_files[1]) if r.get("M", "").isdigit()}
    if fixq or torch:
        lines.append("\n== GEMM + epilogue, us per call (N = K = 4096, s8 x s8) ==")
        lines += [c for f in gemm_files for c in comments(f)]
        lines.append(f"{'M':>5} {'epilogue':<20} {'fixq us':>9} {'torch us':>9} {'speedup':>8} {'target':>7} "
                     f"{'fixq TOPS':>10} {'of mma peak':>11}")
        for key in sorted(set(fixq) | set(torch)):
            f, t = fixq.get(key), torch.get(key)
            line = f"{key[0]:>5} {key[1]:<20} " + (f"{float(f['us']):>9.2f} " if f else f"{'-':>9} ")
            if f and t:
                speed = float(t["us"]) / float(f["us"])
                need = 1.5 if key[0] <= 64 else 1.0
                line += f"{float(t['us']):>9.2f} {speed:>7.2f}x {('met' if speed >= need else 'MISSED'):>7} "
            else:
                line += (f"{float(t['us']):>9.2f} " if t else f"{'-':>9} ") + f"{'-':>8} {'-':>7} "
            if f:
                line += f"{float(f['tops']):>10.1f} {100 * float(f['fraction_of_mma_peak']):>10.1f}%"
            lines.append(line)

    if FAIL in verdicts or problems:
        result = "FAIL (a check above failed; the logs are in logs.tgz)"
    elif INCOMPLETE in verdicts:
        result = "INCOMPLETE (nothing failed, but not every check ran: see above)"
    elif mode == "dry-run":
        result = "PASS (dry run: every step that needs no GPU passed; the GPU steps were skipped)"
    else:
        result = "PASS (every GPU output equals the CPU's; sanitizers clean)"
    if "stale" in info:
        result += " -- BUT THE BUNDLE IS NOT HEAD"
    lines.append("\nRESULT: " + result)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
