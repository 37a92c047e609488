"""The report of a GPU check: one JSON file (everything, for tools such as tools/fit_timing.py)
and a Markdown summary beside it (`<report>.md`), rewritten as results come in.

Per launch and per cubin (ptxas's, ours): did it compile, did it run on the GPU, do its
outputs meet the corpus's reference, are they the emulator's bits for the same cubin, are
ours ptxas's bits; the GPU time (CUDA events, median of a few launches) beside the
emulator's cycle estimate. Verdicts: "same" (identical bytes), "pass" (within the output's
tolerance), "fail", "none" (nothing to compare with)."""
from __future__ import annotations

import json
import math
import time
import zipfile
from pathlib import Path

FORMAT = 1
VARIANTS = ("ptxas", "ours")
PROBLEMS_SHOWN = 40


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(t))


def geomean(values: list[float]) -> float | None:
    values = [v for v in values if v and v > 0]
    return float(math.exp(sum(math.log(v) for v in values) / len(values))) if values else None


def spearman(x: list[float], y: list[float]) -> float | None:
    """Rank correlation (ties broken by order), None below five points."""
    if len(x) < 5:
        return None
    def ranks(v):
        r = [0.0] * len(v)
        for rank, i in enumerate(sorted(range(len(v)), key=lambda i: v[i])):
            r[i] = float(rank)
        return r
    rx, ry = ranks(x), ranks(y)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx, syy = sum((a - mx) ** 2 for a in rx), sum((b - my) ** 2 for b in ry)
    return sxy / math.sqrt(sxx * syy) if sxx and syy else None


class Report:
    def __init__(self, path: Path, budget_s: float):
        self.path = Path(path)
        self.started = time.time()
        self.data = {"tool": "tools.gpu_check", "format": FORMAT, "status": "running",
                     "started": _iso(self.started), "budget_s": budget_s, "notes": {}, "stages": {}}
        self.bundle = None
        self.units: dict[tuple[int, str], dict] = {}
        self.benches: dict[int, dict] = {}
        self.tinygrad: dict[str, dict[str, dict]] = {}

    # -- input

    def set_bundle(self, bundle) -> None:
        self.bundle = bundle
        m = bundle.manifest
        self.data["bundle"] = {"arch": m["arch"], "created": m.get("created"), "git": m.get("git"),
                               "ptxas": m.get("ptxas"), "selection": m.get("selection"),
                               "launches": len(bundle.launches), "skipped_at_prepare": len(m.get("skipped", [])),
                               "calibration": len(bundle.calibration)}

    def set_device(self, info: dict) -> None:
        self.data["device"] = info

    def note(self, stage: str, text: str) -> None:
        self.data["notes"][stage] = text

    def launch_event(self, event: dict) -> None:
        if event.get("event") == "result" and event["unit"][0] == "launch":
            self.units[(event["unit"][1], event["unit"][2])] = event

    def bench_event(self, event: dict) -> None:
        if event.get("event") == "result" and event["unit"][0] == "bench":
            self.benches[event["unit"][1]] = event

    def tinygrad_event(self, device: str, event: dict) -> None:
        if event.get("event") == "result":
            self.tinygrad.setdefault(device, {})[event["unit"][1]] = event

    def stage(self, name: str, units: int, done: int, seconds: float, workers: int, log: str = "") -> None:
        """A stage's counts, with the end of its last worker's output (warnings, tracebacks)."""
        self.data["stages"][name] = {"units": units, "done": done, "seconds": round(seconds, 1),
                                     "workers": workers, "last_worker_output": log[-1500:]}

    def incomplete(self) -> bool:
        return any(s["done"] < s["units"] for s in self.data["stages"].values())

    def attach_mismatches(self, folder: Path) -> None:
        """Outputs that failed a comparison, zipped beside the report (bounded by the worker)."""
        files = sorted(Path(folder).glob("*.bin")) if Path(folder).is_dir() else []
        if not files:
            return
        target = self.path.with_name(self.path.stem + "_mismatches.zip")
        with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as z:
            for f in files:
                index, variant, buffer = f.name.split(".", 3)[:3]
                z.write(f, f"{self.bundle.launches[int(index)]['id'].replace('/', '__')}.{variant}.{buffer}.bin")
        self.data["mismatch_outputs"] = target.name

    def finish(self, status: str, reason: str | None = None) -> None:
        self.data["status"] = status
        if reason:
            self.data["reason"] = reason
        self.write()

    # -- output

    def launches(self) -> list[dict]:
        out = []
        for i, spec in enumerate(self.bundle.launches if self.bundle else []):
            entry = {"id": spec["id"], "corpus": spec["corpus"], "held_back": spec.get("held_back", False),
                     "threads": spec.get("threads")}
            extra = sorted(v for v in spec["cubins"] if v not in VARIANTS)   # experiment variants
            for v in VARIANTS + tuple(extra) + ("jit",):
                if v == "jit" and (i, v) not in self.units:
                    continue
                build = spec["cubins"].get(v, {"status": "ok"})        # jit: the driver compiles
                emu = spec["emu"].get("ptxas" if v == "jit" else v, {})
                e = {"compile": build.get("status")}
                if build.get("status") != "ok":
                    e["compile_error"] = (build.get("error") or "")[:200]
                if emu:
                    e["emu"] = {"status": emu.get("status"), "cycles": emu.get("cycles"),
                                "hazards": emu.get("hazards"),
                                "reference": (emu.get("reference") or {}).get("verdict"),
                                "error": emu.get("error")}
                gpu = self.units.get((i, v))
                if gpu:
                    e["gpu"] = {k: gpu[k] for k in ("status", "error", "time_us", "reference", "emulator",
                                                     "vs_ptxas", "facts", "sha") if k in gpu}
                entry[v] = e
            entry["ours_vs_ptxas"] = self._ours_vs_ptxas(entry)
            out.append(entry)
        return out

    @staticmethod
    def _ours_vs_ptxas(entry: dict) -> str | None:
        ours, theirs = entry["ours"].get("gpu"), entry["ptxas"].get("gpu")
        if not ours or not theirs or ours.get("status") != "ok" or theirs.get("status") != "ok":
            return None
        if "vs_ptxas" in ours:
            return ours["vs_ptxas"]["verdict"]
        return "same" if ours.get("sha") == theirs.get("sha") else "differs"

    def summary(self, launches: list[dict]) -> dict:
        groups: dict[str, list[dict]] = {}
        for e in launches:
            groups.setdefault(e["corpus"], []).append(e)
        groups["all"] = launches
        groups["held back"] = [e for e in launches if e["held_back"]]
        return {name: self._counts(items) for name, items in groups.items() if items}

    @staticmethod
    def _counts(items: list[dict]) -> dict:
        c = {"launches": len(items)}

        def gpu(e, v):
            return e[v].get("gpu") or {}
        for v in VARIANTS:
            ran = [e for e in items if gpu(e, v).get("status") == "ok"]
            c[f"{v} compiled"] = sum(e[v]["compile"] == "ok" for e in items)
            c[f"{v} ran"] = len(ran)
            c[f"{v} failed to run"] = sum(bool(gpu(e, v)) and gpu(e, v).get("status") != "ok" for e in items)
            for what in ("reference", "emulator"):
                verdicts = [gpu(e, v)[what]["verdict"] for e in ran if what in gpu(e, v)]
                c[f"{v} {what} checked"] = sum(x != "none" for x in verdicts)
                c[f"{v} {what} ok"] = sum(x in ("same", "pass") for x in verdicts)
                c[f"{v} {what} same bits"] = sum(x == "same" for x in verdicts)
        jit = [e for e in items if (e.get("jit") or {}).get("gpu")]
        if jit:
            c["jit ran"] = sum(gpu(e, "jit").get("status") == "ok" for e in jit)
            c["jit reference ok"] = sum((gpu(e, "jit").get("reference") or {}).get("verdict") in ("same", "pass")
                                        for e in jit)
        pairs = [e["ours_vs_ptxas"] for e in items if e["ours_vs_ptxas"]]
        c["ours vs ptxas compared"] = len(pairs)
        c["ours = ptxas bits"] = sum(p == "same" for p in pairs)
        c["ours within tolerance of ptxas"] = sum(p == "pass" for p in pairs)
        both = [e for e in items if (gpu(e, "ours").get("time_us") and gpu(e, "ptxas").get("time_us"))]
        c["time ours/ptxas"] = geomean([gpu(e, "ours")["time_us"]["median"] / gpu(e, "ptxas")["time_us"]["median"]
                                        for e in both])
        c["time pairs"] = len(both)
        emu = [e for e in both if (e["ours"].get("emu") or {}).get("cycles") and (e["ptxas"].get("emu") or {}).get("cycles")]
        c["emu cycles ours/ptxas"] = geomean([e["ours"]["emu"]["cycles"] / e["ptxas"]["emu"]["cycles"] for e in emu])
        regs = [(gpu(e, "ours").get("facts") or {}).get("registers", 0) /
                (gpu(e, "ptxas").get("facts") or {}).get("registers", 0)
                for e in items if (gpu(e, "ptxas").get("facts") or {}).get("registers")
                and (gpu(e, "ours").get("facts") or {}).get("registers")]
        c["registers ours/ptxas"] = geomean(regs)
        timed = [e for e in items if gpu(e, "ptxas").get("time_us") and (e["ptxas"].get("emu") or {}).get("cycles")]
        c["rank correlation emu cycles ~ GPU time (ptxas)"] = spearman(
            [e["ptxas"]["emu"]["cycles"] for e in timed], [gpu(e, "ptxas")["time_us"]["median"] for e in timed])
        c["rank pairs"] = len(timed)
        return c

    def problems(self, launches: list[dict]) -> list[str]:
        out = []
        for e in launches:
            for v in [v for v in VARIANTS + ("jit",) if v in e]:
                g = e[v].get("gpu")
                if e[v]["compile"] == "crash":
                    out.append(f"{e['id']}: {v}: compiler crashed: {e[v].get('compile_error')}")
                if not g:
                    continue
                if g.get("status") != "ok":
                    out.append(f"{e['id']}: {v}: {g.get('status')}: {g.get('error', '')[:160]}")
                    continue
                for what in ("reference", "emulator"):
                    r = g.get(what) or {}
                    if r.get("verdict") == "fail":
                        detail = "; ".join(f"{k}: {m}" for k, m in r.get("detail", {}).items())[:200]
                        out.append(f"{e['id']}: {v} on the GPU differs from the {what}: {detail}")
            if e["ours_vs_ptxas"] in ("fail", "differs"):
                out.append(f"{e['id']}: ours and ptxas's outputs differ on the GPU")
        return out

    def calibration(self) -> list[dict]:
        out = []
        for i, spec in enumerate(self.bundle.calibration if self.bundle else []):
            entry = {"id": spec["id"], "kind": spec["kind"], "meta": spec["meta"],
                     "compile": spec["cubin"]["status"]}
            if "emu" in spec:
                entry["emu"] = {k: spec["emu"].get(k) for k in ("status", "cycles", "instructions", "params", "error")}
            g = self.benches.get(i)
            if g:
                entry["gpu"] = {k: g[k] for k in ("status", "error", "image", "facts", "grid", "block", "time_us",
                                                  "ctas", "cycles", "ns", "sms_used") if k in g}
            out.append(entry)
        return out

    def document(self) -> dict:
        doc = dict(self.data)
        doc["elapsed_s"] = round(time.time() - self.started, 1)
        if self.bundle is not None:
            launches = self.launches()
            doc["summary"] = self.summary(launches)
            doc["problems"] = self.problems(launches)
            doc["launches"] = launches
            doc["calibration"] = self.calibration()
            if any("gpu" in c for c in doc["calibration"]):
                try:
                    from tools import fit_timing
                    doc["fit"] = fit_timing.fit(doc)
                except Exception as e:  # noqa: BLE001 - the fit must not cost the report
                    doc["fit"] = {"error": f"{type(e).__name__}: {e}"}
        if self.tinygrad:
            doc["tinygrad"] = {dev: {"passed": sum(r.get("status") == "ok" and r.get("match") for r in res.values()),
                                     "programs": res}
                               for dev, res in self.tinygrad.items()}
        return doc

    def write(self) -> None:
        doc = self.document()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(doc, indent=1, default=str))
        tmp.replace(self.path)
        self.path.with_suffix(".md").write_text(markdown(doc))


# --------------------------------------------------------------------------- Markdown

def _ratio(x) -> str:
    return f"{x:.3f}" if isinstance(x, float) else "–"


def _of(c: dict, ok: str, total: str) -> str:
    return f"{c.get(ok, 0)}/{c.get(total, 0)}"


def variant_rows(launches: list[dict]) -> list[str]:
    """One table row per launch and variant, for launches that carry experiment variants."""
    rows = []
    for e in launches:
        names = [v for v in e if v not in VARIANTS + ("jit",) and isinstance(e[v], dict) and "compile" in e[v]]
        if not names:
            continue
        for v in VARIANTS + tuple(sorted(names)):
            g = (e.get(v) or {}).get("gpu") or {}
            if not g:
                continue
            verdict = lambda what: (g.get(what) or {}).get("verdict", "-")
            t = (g.get("time_us") or {}).get("median")
            rows.append(f"| {e['id']} | {v} | {g.get('status')} | {verdict('reference')} | {verdict('emulator')} | "
                        f"{verdict('vs_ptxas')} | {t if t is not None else '-'} |")
    return rows


def markdown(doc: dict) -> str:
    dev = doc.get("device", {})
    b = doc.get("bundle", {})
    lines = [f"# GPU check: {dev.get('name', 'no device')} ({dev.get('arch', '?')})", "",
             f"status **{doc['status']}**" + (f" ({doc['reason']})" if doc.get("reason") else "")
             + f"; {doc.get('elapsed_s', 0):.0f} s of a {doc.get('budget_s', 0):.0f} s budget; "
             f"bundle for {b.get('arch', '?')} from commit {str((b.get('git') or {}).get('commit'))[:10]}"
             f"{' (dirty)' if (b.get('git') or {}).get('dirty') else ''}, ptxas {b.get('ptxas', '?')}", ""]
    if dev:
        lines += [f"device: {dev.get('sms')} SMs, clock {dev.get('clock_khz', 0) / 1000:.0f} MHz, "
                  f"L2 {dev.get('l2_bytes', 0) / 2**20:.0f} MiB, driver CUDA {dev.get('driver_cuda_version', '?')}, "
                  f"cuda-bindings {dev.get('cuda_bindings', '?')}", ""]
        for when in ("before", "after"):
            if dev.get(f"nvidia_smi_{when}"):
                lines += [f"nvidia-smi {when}:", "", "```", dev[f"nvidia_smi_{when}"], "```", ""]
    for stage, note in doc.get("notes", {}).items():
        lines += [f"{stage}: {note}", ""]
    for stage, s in doc.get("stages", {}).items():
        lines.append(f"- {stage}: {s['done']}/{s['units']} units in {s['seconds']} s ({s['workers']} worker process(es))")
    lines.append("")
    summary = doc.get("summary") if "launches" in doc.get("stages", {}) else None
    if summary:
        lines += ["## Corpus launches", "",
                  "Counts are ok/checked. *ref*: outputs meet the corpus's reference; *emu*: the GPU wrote the "
                  "emulator's bits for the same cubin (or within tolerance); *= ptxas*: our outputs are ptxas's "
                  "bits (or within tolerance). Time: GPU median per launch (CUDA events), geomean of ours/ptxas; "
                  "the emulator's cycle estimate beside it; rank correlation of the emulator's cycles with GPU "
                  "time over ptxas's cubins.", "",
                  "| corpus | launches | ptxas ran | ptxas ref | ptxas emu | ours compiled | ours ran | ours ref | "
                  "ours emu | ours = ptxas | time ours/ptxas | emu cycles ours/ptxas | rank corr. |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for name, c in summary.items():
            lines.append(
                f"| {name} | {c['launches']} | {c['ptxas ran']}/{c['ptxas compiled']} | "
                f"{_of(c, 'ptxas reference ok', 'ptxas reference checked')} | "
                f"{_of(c, 'ptxas emulator ok', 'ptxas emulator checked')} | {c['ours compiled']} | "
                f"{c['ours ran']}/{c['ours compiled']} | {_of(c, 'ours reference ok', 'ours reference checked')} | "
                f"{_of(c, 'ours emulator ok', 'ours emulator checked')} | "
                f"{c['ours = ptxas bits'] + c['ours within tolerance of ptxas']}/{c['ours vs ptxas compared']} | "
                f"{_ratio(c['time ours/ptxas'])} ({c['time pairs']}) | {_ratio(c['emu cycles ours/ptxas'])} | "
                f"{_ratio(c['rank correlation emu cycles ~ GPU time (ptxas)'])} ({c['rank pairs']}) |")
        lines.append("")
        if summary.get("all", {}).get("registers ours/ptxas"):
            lines += [f"Registers per thread (the driver's count), geomean ours/ptxas: "
                      f"{summary['all']['registers ours/ptxas']:.3f}.", ""]
        jit = summary.get("all", {})
        if "jit ran" in jit:
            lines += [f"The driver's JIT of the PTX (where ptxas's cubins did not load): {jit['jit ran']} ran, "
                      f"{jit['jit reference ok']} meet the reference.", ""]
        rows = variant_rows(doc.get("launches", []))
        if rows:
            lines += ["### Experiment variants (`python -m tools.gpu_check variants`)", "",
                      "A variant rewrites its base cubin's control codes or one modifier bit; it is held to its "
                      "base's emulator outputs (what the program should compute).", "",
                      "| launch | variant | ran | reference | emulator (intended bits) | vs ptxas on the GPU | time us |",
                      "|---|---|---|---|---|---|---|"] + rows + [""]
        problems = doc.get("problems", [])
        if problems:
            lines += [f"### Problems ({len(problems)})", ""]
            lines += [f"- {p}" for p in problems[:PROBLEMS_SHOWN]]
            if len(problems) > PROBLEMS_SHOWN:
                lines.append(f"- … {len(problems) - PROBLEMS_SHOWN} more in the JSON report")
            lines.append("")
    fit = doc.get("fit")
    if fit:
        lines += ["## Timing model calibration", ""]
        try:
            from tools import fit_timing
            lines += fit_timing.markdown(fit).splitlines()
        except Exception as e:  # noqa: BLE001
            lines.append(f"(fit unavailable: {e})")
        lines.append("")
    tg = doc.get("tinygrad")
    if tg:
        lines += ["## tinygrad programs (tests/tinygrad_programs.py against tinygrad's CPU device)", "",
                  "| device | matches | differs | errors |", "|---|---|---|---|"]
        for device, res in tg.items():
            progs = res["programs"].values()
            differs = sum(r.get("status") == "ok" and not r.get("match") for r in progs)
            errors = sum(r.get("status") != "ok" for r in progs)
            lines.append(f"| {device} | {res['passed']}/{len(res['programs'])} | {differs} | {errors} |")
        lines.append("")
        for device, res in tg.items():
            for name, r in res["programs"].items():
                if r.get("status") != "ok" or not r.get("match"):
                    lines.append(f"- {device} {name}: {r.get('status')}: {str(r.get('error') or r.get('detail', ''))[:200]}")
        lines.append("")
    if doc.get("mismatch_outputs"):
        lines += [f"Outputs that failed a comparison: {doc['mismatch_outputs']}", ""]
    return "\n".join(lines)
