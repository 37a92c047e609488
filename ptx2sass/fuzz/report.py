"""Campaign reports: one JSON document and a text summary, built from the per-seed results
(so reports of several machines or runs merge by concatenating their results)."""
from __future__ import annotations

import statistics
from collections import Counter, defaultdict

from ptx2sass.fuzz.coverage import coverage_summary
from ptx2sass.fuzz.runner import CLASSES, renormalise

EXAMPLES = 5


def build_report(results: list[dict], meta: dict | None = None) -> dict:
    meta = dict(meta or {})
    n = len(results)
    first = Counter(r["first_class"] for r in results)
    final = Counter(r["class"] for r in results)
    findings: dict[str, dict] = {}
    for r in sorted(results, key=lambda r: r["seed"]):
        for cls, sig in r.get("findings", []):
            sig = renormalise(sig)
            f = findings.setdefault(sig, {"class": cls, "signature": sig, "programs": 0, "seeds": []})
            f["programs"] += 1
            if len(f["seeds"]) < EXAMPLES:
                f["seeds"].append(r["seed"])
    by_class = defaultdict(list)
    for f in findings.values():
        by_class[f["class"]].append(f)
    for fs in by_class.values():
        fs.sort(key=lambda f: (-f["programs"], f["signature"]))
    timing = defaultdict(list)
    for r in results:
        for k, v in r.get("seconds", {}).items():
            timing[k].append(v)
    wall = meta.get("wall_seconds")
    cpu = sum(timing.get("total", []))
    quality = _quality(results)
    report = {
        "meta": meta,
        "programs": n,
        "seeds": [min((r["seed"] for r in results), default=0), max((r["seed"] for r in results), default=-1)],
        "first_class": {c: first.get(c, 0) for c in CLASSES if first.get(c, 0)} | _others(first),
        "final_class": {c: final.get(c, 0) for c in CLASSES if final.get(c, 0)} | _others(final),
        "peeled_refusals": sum(r.get("peeled", 0) for r in results),
        "distinct_signatures": {c: len(v) for c, v in sorted(by_class.items())},
        "findings": {c: v for c, v in sorted(by_class.items())},
        "timing_median_s": {k: round(statistics.median(v), 3) for k, v in sorted(timing.items()) if v},
        "cpu_seconds": round(cpu, 1),
        "programs_per_hour": round(n / wall * 3600, 1) if wall else None,
        "programs_per_cpu_hour": round(n / cpu * 3600, 1) if cpu else None,
        "quality": quality,
        "coverage": coverage_summary(results),
    }
    return report


def _others(counter: Counter) -> dict:
    return {c: v for c, v in counter.items() if c not in CLASSES}


def _quality(results) -> dict:
    """Geomeans ours/ptxas of registers, instructions and cycles over passing programs."""
    import math
    ratios = defaultdict(list)
    for r in results:
        if r["class"] != "pass":
            continue
        o, t = r.get("ours") or {}, r.get("theirs") or {}
        for k in ("registers", "instructions", "cycles"):
            if o.get(k) and t.get(k):
                ratios[k].append(o[k] / t[k])
    return {k: round(math.exp(sum(map(math.log, v)) / len(v)), 3) for k, v in ratios.items() if v} | \
        {"programs": len(ratios.get("cycles", []))}


def text_report(rep: dict) -> str:
    out = []
    meta = rep.get("meta", {})
    out.append(f"ptx2sass-fuzz: {rep['programs']} programs, seeds {rep['seeds'][0]}..{rep['seeds'][1]}"
               + (f", {meta.get('wall_seconds', 0):.0f} s wall" if meta.get("wall_seconds") else "")
               + (f", {meta['jobs']} jobs" if meta.get("jobs") else "")
               + (f" on Ray ({meta['ray']})" if meta.get("ray") else ""))
    if rep.get("programs_per_hour"):
        out.append(f"throughput: {rep['programs_per_hour']:.0f} programs/hour "
                   f"({rep['programs_per_cpu_hour']:.0f} per CPU-hour)")
    out.append("")
    out.append("class       whole program   after peeling refusals")
    classes = sorted(set(rep["first_class"]) | set(rep["final_class"]),
                     key=lambda c: CLASSES.index(c) if c in CLASSES else 99)
    for c in classes:
        out.append(f"{c:<11} {rep['first_class'].get(c, 0):>8}        {rep['final_class'].get(c, 0):>8}")
    out.append(f"({rep['peeled_refusals']} refused statements peeled off and the rest run again)")
    q = rep.get("quality", {})
    if q.get("programs"):
        out.append(f"passing programs, geomean ours/ptxas: registers {q.get('registers', '-')}, "
                   f"instructions {q.get('instructions', '-')}, cycles {q.get('cycles', '-')} "
                   f"({q['programs']} programs)")
    out.append("")
    for cls, fs in rep["findings"].items():
        out.append(f"== {cls}: {len(fs)} distinct")
        for f in fs:
            out.append(f"  {f['programs']:>5}  {f['signature']}   seeds {', '.join(map(str, f['seeds']))}")
        out.append("")
    cov = rep.get("coverage", {})
    if cov:
        out.append("== generator coverage")
        inv = cov.get("inventory", {})
        if inv:
            out.append(f"  instruction forms of the inventory ({inv['source']}): {inv['covered']}/{inv['total']} "
                       f"({inv['percent']}%)")
        for k in ("keys", "opcodes", "spaces", "shapes", "launches", "pressure", "features"):
            if k in cov:
                out.append(f"  distinct {k}: {len(cov[k])}")
        out.append("")
    t = rep.get("timing_median_s", {})
    if t:
        out.append("median seconds per program: " + ", ".join(f"{k} {v}" for k, v in t.items()))
    return "\n".join(out) + "\n"
