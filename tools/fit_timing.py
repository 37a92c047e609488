"""What a GPU check's calibration timings say about the timing model's constants.

    python -m tools.fit_timing gpu_report.json [--json]

Reads the report of `python -m tools.gpu_check run` (its "calibration" entries: each
benchmark's %clock64 cycles and %globaltimer nanoseconds per CTA, CUDA-event times, the
opcodes of ptxas's measured loop, and the emulator's cycles for the same kernel) and prints:
- the SM clock the cycles and nanoseconds imply;
- per operation, the dependent-issue latency (the slope between two iteration counts, per SASS
  instruction of the chain) beside the emulator's figure for the same kernel;
- per operation, instructions per SM per cycle with 32 warps per SM;
- global-load latency by footprint (`ld.global.ca`, `.cg`), and from it the L1-hit, L2-hit
  and DRAM latencies and the sizes where the steps fall;
- shared-memory latency by lane stride, and the cost of each further way of a bank conflict;
- FFMA throughput by resident warps (how many hide the FFMA latency);
- read bandwidth by footprint, and the launch overhead;
- the entries of `sched/latency.py` those figures imply (`constants`).
Only what the report measured is printed; a figure whose benchmark failed is left out.
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

# chain op → (sched.latency table, key) its per-instruction latency is
TABLE_KEYS = {"ffma": ("FIXED", "FFMA"), "fadd": ("FIXED", "FADD"), "fmul": ("FIXED", "FMUL"),
              "hfma2": ("FIXED", "HFMA2"), "imad": ("FIXED", "IMAD"), "iadd3": ("FIXED", "IADD3"),
              "lop3_shf": ("FIXED", "LOP3/SHF"), "popc": ("VARIABLE", "POPC"), "mufu_rsq": ("VARIABLE", "MUFU"),
              "mufu_ex2": ("VARIABLE", "MUFU.EX2"), "cvt_i2f_f2i": ("VARIABLE", "I2F/F2I"),
              "dfma": ("VARIABLE", "DFMA"), "dadd": ("VARIABLE", "DADD"), "shfl": ("VARIABLE", "SHFL"),
              "lds": ("VARIABLE", "LDS"), "hmma": ("FIXED", "HMMA")}
KIB = 1024


def _gpu(entry: dict) -> dict | None:
    g = entry.get("gpu")
    return g if g and g.get("status") == "ok" else None


def _sass_per_step(meta: dict) -> int:
    """Dependent SASS instructions per chain step, from ptxas's loop (or 1 when unknown),
    rounded: the loop's own counter may be one more instruction of the same opcode."""
    counts = meta.get("loop_opcodes") or {}
    n = sum(counts.get(op, 0) for op in meta.get("sass", []))
    steps = meta.get("ops_per_iteration") or 1
    return max(1, round(n / steps))


def clock_mhz(entries: list[dict]) -> float | None:
    """SM cycles per microsecond over every benchmark that ran long enough to tell."""
    ratios = [g["cycles"]["median"] / g["ns"]["median"] * 1000 for g in map(_gpu, entries)
              if g and g.get("ns", {}).get("median", 0) >= 20_000]
    return round(statistics.median(ratios), 1) if ratios else None


def chain_latencies(entries: list[dict]) -> dict:
    """{op: {"gpu": cycles per instruction, "model": the emulator's, "per_step": ...}}."""
    by_op: dict[str, list[dict]] = {}
    for e in entries:
        if e["kind"] == "chain":
            by_op.setdefault(e["meta"]["op"], []).append(e)
    out = {}
    for op, runs in by_op.items():
        runs = sorted(runs, key=lambda e: e["meta"]["iterations"])
        lo, hi = runs[0], runs[-1]
        steps = lo["meta"]["ops_per_iteration"]
        per_step = {}
        glo, ghi = _gpu(lo), _gpu(hi)
        if glo and ghi and hi["meta"]["iterations"] > lo["meta"]["iterations"]:
            per_step["gpu"] = (ghi["cycles"]["median"] - glo["cycles"]["median"]) / \
                ((hi["meta"]["iterations"] - lo["meta"]["iterations"]) * steps)
        elo, ehi = lo.get("emu") or {}, hi.get("emu") or {}
        if elo.get("cycles") and ehi.get("cycles") and hi["meta"]["emu_iterations"] > lo["meta"]["emu_iterations"]:
            per_step["model"] = (ehi["cycles"] - elo["cycles"]) / \
                ((hi["meta"]["emu_iterations"] - lo["meta"]["emu_iterations"]) * steps)
        if per_step:
            out[op] = {"per_step": per_step, "sass_per_step": _sass_per_step(lo["meta"]),
                       "also": lo["meta"].get("also", [])}
    # per instruction: a step's cycles less those of the other chains it contains, shared by
    # its dependent instructions
    for op, r in out.items():
        for side in ("gpu", "model"):
            if side not in r["per_step"]:
                continue
            cycles = r["per_step"][side]
            for other in r["also"]:
                other_r = out.get(other, {})
                if side not in other_r.get("per_step", {}):
                    cycles = None
                    break
                cycles -= other_r["per_step"][side]
            if cycles is not None:
                r[side] = round(cycles / r["sass_per_step"], 2)
        r["per_step"] = {k: round(v, 2) for k, v in r["per_step"].items()}
    return out


def throughputs(entries: list[dict], sms: int | None, clock: float | None) -> dict:
    """{op: instructions per SM per cycle}: from each CTA's own cycles (one CTA of 32 warps
    per SM), and from the CUDA-event time with the clock (`by_events`)."""
    out = {}
    for e in entries:
        g = _gpu(e)
        if e["kind"] != "throughput" or not g:
            continue
        m = e["meta"]
        per_thread = _sass_per_step(m) * m["ops_per_iteration"] * m["iterations"]
        ctas_per_sm = g["ctas"] / max(g.get("sms_used") or 1, 1)
        r = {"per_sm_per_clock": round(m["threads_per_cta"] * per_thread * ctas_per_sm / g["cycles"]["median"], 2)}
        if sms and clock and g.get("time_us"):
            total = m["threads_per_cta"] * per_thread * g["ctas"]
            r["by_events"] = round(total / (g["time_us"]["median"] * clock * sms), 2)
        out[m["op"]] = r
    return out


def memory(entries: list[dict], l2_bytes: int | None) -> dict:
    """Load latency by footprint and the plateaus it shows."""
    curves: dict[str, list[tuple[int, float]]] = {}
    model = None
    for e in entries:
        if e["kind"] != "chase":
            continue
        g, m = _gpu(e), e["meta"]
        if g:
            curves.setdefault(m["cache"], []).append((m["footprint"], g["cycles"]["median"] / m["loads"]))
        emu = e.get("emu") or {}
        if emu.get("cycles") and m["cache"] == "ca" and model is None:
            iters = emu["params"][1]["value"]
            model = round(emu["cycles"] / (iters * 16), 1)
    for c in curves.values():
        c.sort()
    out = {"by_footprint": {k: [[f // KIB, round(v, 1)] for f, v in c] for k, c in curves.items()}}
    if model is not None:
        out["model_per_load"] = model
    ca, cg = curves.get("ca", []), curves.get("cg", [])
    small = [v for f, v in ca if f <= 16 * KIB]
    if small:
        out["l1_hit"] = round(min(small), 1)
        out["l1_bytes_est"] = max(f for f, v in ca if v <= 1.25 * out["l1_hit"])
    l2_limit = (l2_bytes or 32 << 20) // 8
    l2_points = [v for f, v in cg if f <= l2_limit] or \
        [v for f, v in ca if 2 << 20 <= f <= l2_limit]
    if l2_points:
        out["l2_hit"] = round(statistics.median(l2_points), 1)
    big = [(f, v) for f, v in ca + cg if l2_bytes and f >= 4 * l2_bytes]
    if big:
        out["dram"] = round(statistics.median(v for f, v in big if f == max(f for f, _ in big)), 1)
    if "l2_hit" in out and "dram" in out:
        middle = (out["l2_hit"] + out["dram"]) / 2
        below = [f for f, v in ca if v <= middle]
        if below:
            out["l2_bytes_est"] = max(below)
    return out


def _ways(stride: int) -> int:
    """Lanes of a warp that share a bank when lane l reads word l * stride (stride 0: one
    word for all, a broadcast)."""
    return 1 if stride == 0 else math.gcd(stride, 32)


def bank_conflicts(entries: list[dict]) -> dict:
    points, model = {}, {}
    for e in entries:
        if e["kind"] != "bank":
            continue
        m, g, emu = e["meta"], _gpu(e), e.get("emu") or {}
        per = _sass_per_step(m) * m["ops_per_iteration"]
        if g:
            points[m["stride_words"]] = g["cycles"]["median"] / (m["iterations"] * per)
        if emu.get("cycles"):
            model[m["stride_words"]] = round(emu["cycles"] / (emu["params"][1]["value"] * per), 1)
    out = {"by_stride": {s: round(v, 1) for s, v in sorted(points.items())}}
    if model:
        out["model_by_stride"] = dict(sorted(model.items()))
    if len(points) >= 2:
        xs = [_ways(s) - 1 for s in points]
        ys = list(points.values())
        mx, my = statistics.mean(xs), statistics.mean(ys)
        var = sum((x - mx) ** 2 for x in xs)
        if var:
            slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / var
            out["per_extra_way"] = round(slope, 2)
            out["conflict_free"] = round(my - slope * mx, 1)
    return out


def occupancy(entries: list[dict], sms: int | None, clock: float | None) -> dict:
    rates = {}
    for e in entries:
        g = _gpu(e)
        if e["kind"] != "occupancy" or not g:
            continue
        m = e["meta"]
        per_thread = _sass_per_step(m) * m["ops_per_iteration"] * m["iterations"]
        if sms and clock and g.get("time_us"):
            total = m["threads_per_cta"] * per_thread * g["ctas"]
            rates[m["warps_per_sm"]] = total / (g["time_us"]["median"] * clock * sms)
        else:
            rates[m["warps_per_sm"]] = m["threads_per_cta"] * per_thread * m["ctas_per_sm"] / g["cycles"]["median"]
    out = {"ffma_per_sm_per_clock": {w: round(r, 2) for w, r in sorted(rates.items())}}
    if rates:
        peak = max(rates.values())
        out["peak"] = round(peak, 2)
        out["warps_for_90_percent"] = min(w for w, r in rates.items() if r >= 0.9 * peak)
    return out


def bandwidth(entries: list[dict]) -> dict:
    out = {}
    for e in entries:
        g = _gpu(e)
        if e["kind"] == "stream" and g and g.get("time_us"):
            out[f"{e['meta']['bytes'] >> 20} MiB"] = round(e["meta"]["bytes"] / (g["time_us"]["median"] * 1e3), 1)
    return out


def fit(report: dict) -> dict:
    entries = report.get("calibration", [])
    device = report.get("device", {})
    clock = clock_mhz(entries)
    sms = device.get("sms")
    out = {"device": device.get("name"), "arch": device.get("arch"), "clock_mhz": clock,
           "latency": chain_latencies(entries), "throughput": throughputs(entries, sms, clock),
           "memory": memory(entries, device.get("l2_bytes")), "bank": bank_conflicts(entries),
           "occupancy": occupancy(entries, sms, clock), "bandwidth_gb_s": bandwidth(entries)}
    empty = next((_gpu(e) for e in entries if e["kind"] == "empty"), None)
    if empty and empty.get("time_us"):
        out["launch_overhead_us"] = empty["time_us"]["median"]
    constants: dict[str, dict[str, float]] = {"FIXED": {}, "VARIABLE": {}}
    for op, r in out["latency"].items():
        if "gpu" in r and op in TABLE_KEYS:
            table, key = TABLE_KEYS[op]
            constants[table][key] = round(r["gpu"])
    mem = out["memory"]
    for key, name in (("l1_hit", "LDG (L1 hit)"), ("l2_hit", "LDG (L2 hit)"), ("dram", "LDG (DRAM)")):
        if key in mem:
            constants["VARIABLE"][name] = round(mem[key])
    out["constants"] = constants
    return out


def markdown(f: dict) -> str:
    lines = [f"SM clock from %clock64/%globaltimer: {f.get('clock_mhz')} MHz"]
    if f.get("launch_overhead_us") is not None:
        lines.append(f"; launch overhead (empty kernel, CUDA events): {f['launch_overhead_us']:.2f} µs")
    lines = ["".join(lines), ""]
    if f["latency"]:
        lines += ["| chain | GPU cycles/instr | model cycles/instr | cycles/step (GPU, model) |", "|---|---|---|---|"]
        for op, r in f["latency"].items():
            steps = r["per_step"]
            lines.append(f"| {op} | {r.get('gpu', '–')} | {r.get('model', '–')} | "
                         f"{steps.get('gpu', '–')}, {steps.get('model', '–')} |")
        lines.append("")
    if f["throughput"]:
        lines += ["| pipe (op) | instr/SM/clock (CTA cycles) | (events × clock) |", "|---|---|---|"]
        for op, r in f["throughput"].items():
            lines.append(f"| {op} | {r['per_sm_per_clock']} | {r.get('by_events', '–')} |")
        lines.append("")
    mem = f["memory"]
    if mem.get("by_footprint"):
        lines.append("global loads, cycles per dependent load by footprint (KiB): " + "; ".join(
            f"{k}: " + ", ".join(f"{kib}K {v}" for kib, v in pts) for k, pts in mem["by_footprint"].items()))
        lines.append(f"L1 hit {mem.get('l1_hit', '–')} (to ~{mem.get('l1_bytes_est', 0) // KIB} KiB), "
                     f"L2 hit {mem.get('l2_hit', '–')} (to ~{mem.get('l2_bytes_est', 0) >> 20} MiB), "
                     f"DRAM {mem.get('dram', '–')}; model {mem.get('model_per_load', '–')} per load")
        lines.append("")
    bank = f["bank"]
    if bank.get("by_stride"):
        lines.append("shared loads by lane stride (words): " + ", ".join(f"{s}: {v}" for s, v in bank["by_stride"].items())
                     + f"; conflict-free {bank.get('conflict_free', '–')}, +{bank.get('per_extra_way', '–')} per extra way"
                     + (f"; model: {bank['model_by_stride']}" if bank.get("model_by_stride") else ""))
        lines.append("")
    occ = f["occupancy"]
    if occ.get("ffma_per_sm_per_clock"):
        lines.append("FFMA per SM per clock by warps per SM: " + ", ".join(
            f"{w}: {r}" for w, r in occ["ffma_per_sm_per_clock"].items())
            + f"; 90% of peak from {occ.get('warps_for_90_percent')} warps")
        lines.append("")
    if f["bandwidth_gb_s"]:
        lines.append("read bandwidth (GB/s): " + ", ".join(f"{k}: {v}" for k, v in f["bandwidth_gb_s"].items()))
        lines.append("")
    lines.append("latency table entries these timings imply (sched/latency.py): `"
                 + json.dumps(f["constants"]) + "`")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report", type=Path)
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)
    report = json.loads(args.report.read_text())
    if not any(e.get("gpu") for e in report.get("calibration", [])):
        print(f"{args.report}: no calibration timings in this report (status {report.get('status')})",
              file=sys.stderr)
        return 1
    f = fit(report)
    print(json.dumps(f, indent=1) if args.json else markdown(f))
    return 0


if __name__ == "__main__":
    sys.exit(main())
