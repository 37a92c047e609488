"""The process that touches the GPU: runs a list of units (one variant of one corpus launch,
or one calibration benchmark) and appends one JSON line per event to a results file, flushed
at once, so that the supervisor (`run.py`) knows where it was if it dies:

    {"event": "begin", "unit": [...]}            before a unit starts
    {"event": "result", "unit": [...], ...}      its outcome
    {"event": "device", "info": {...}}           first, the device's facts
    {"event": "stop", "why": "deadline"}         it stopped before its list ended

Exit status 3: a fault left the context unusable (the unit's result is written); the
supervisor starts a new worker for the units after it. Standard library only (plus
ptx2sass and NumPy for the emulator device used in tests).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import random
import statistics
import struct
import sys
import time
from pathlib import Path

from .bundle import Bundle
from .calibration import OUT_WORDS, resolve, resolve_dims
from .compare import compare_outputs
from .device import Buffer, DeviceError, NoDevice, open_device

STICKY_EXIT = 3
DUMP_LIMIT = 12 << 20            # bytes of mismatching outputs kept for the report's zip
MODULE_CACHE = 16                # modules kept loaded (launches of one PTX file share one)


def chain_bytes(spec: dict, size: int, base: int) -> bytes:
    """A pointer chain at `base`: one u64 per `stride` bytes, visiting every element once in
    a random cycle (seeded), each holding the absolute address of the next."""
    stride = spec["stride"]
    n = max(size // stride, 1)
    order = list(range(n))
    random.Random(spec.get("seed", 0)).shuffle(order)
    words = bytearray(max(size, 8))
    pack = struct.Struct("<Q").pack_into
    for here, there in zip(order, order[1:] + order[:1]):
        pack(words, here * stride, base + there * stride)
    return bytes(words[:size])


def _summary(values: list) -> dict:
    v = [float(x) for x in values]
    return {"min": min(v), "median": float(statistics.median(v)), "max": max(v)}


def time_stats(times_ms: list[float]) -> dict | None:
    if not times_ms:
        return None
    us = [t * 1000 for t in times_ms]
    return {"median": round(statistics.median(us), 3), "min": round(min(us), 3), "n": len(us)}


class Worker:
    def __init__(self, bundle: Bundle, device, results, repeats: int, dump: Path | None):
        self.bundle, self.device, self.out = bundle, device, results
        self.repeats = repeats
        self.modules: dict[str, object] = {}
        self.ptxas_outputs: dict[int, dict[str, bytes]] = {}
        self.dump, self.dumped = dump, 0
        self.info = device.info()

    def emit(self, event: dict) -> None:
        self.out.write(json.dumps(event) + "\n")
        self.out.flush()

    def module(self, key: str, is_ptx: bool = False, label: str = ""):
        if key not in self.modules:
            if len(self.modules) >= MODULE_CACHE:
                old = next(iter(self.modules))
                self.device.unload(self.modules.pop(old))
            self.modules[key] = self.device.load(self.bundle.blob(key), is_ptx, label)
        return self.modules[key]

    def _dump(self, index: int, variant: str, outputs: dict[str, bytes]) -> None:
        if self.dump is None:
            return
        for name, data in outputs.items():
            if self.dumped + len(data) > DUMP_LIMIT:
                return
            self.dump.mkdir(parents=True, exist_ok=True)
            (self.dump / f"{index}.{variant}.{name}.bin").write_bytes(data)
            self.dumped += len(data)

    # -- corpus launches

    def launch(self, index: int, variant: str) -> dict:
        """One variant of a corpus launch: "ptxas" and "ours" load their cubins; "jit" hands
        the PTX to the driver's own compiler and is held to the emulator's outputs of
        ptxas's cubin (a fallback where ptxas's cubins do not load)."""
        spec = self.bundle.launches[index]
        label = f"{spec['id']}:{variant}"
        if variant == "jit":
            module = self.module(spec["ptx"], is_ptx=True, label=label)
        else:
            module = self.module(spec["cubins"][variant]["cubin"], label=label)
        fn, facts = self.device.function(module, spec["kernel"])
        buffers = [Buffer(n, b["size"], self.bundle.blob(b["init"])) for n, b in sorted(spec["buffers"].items())]
        outputs = [o["buffer"] for o in spec["outputs"]]
        res = self.device.run(fn, spec["grid"], spec["block"], spec["dynamic_shared_bytes"], buffers,
                              spec["params"], outputs, repeats=self.repeats, label=label)
        record = {"status": "ok", "facts": facts, "time_us": time_stats(res.times_ms)}
        expected = {o["buffer"]: self.bundle.blob(o["expected"]) for o in spec["outputs"]}
        record["reference"] = compare_outputs(spec["outputs"], res.outputs, expected)
        emu = spec["emu"].get("ptxas" if variant == "jit" else variant, {})
        if emu.get("status") == "ok":
            emu_out = {n: self.bundle.blob(k) for n, k in emu["outputs"].items()}
            record["emulator"] = compare_outputs(spec["outputs"], res.outputs, emu_out, how="bits")
        else:
            record["emulator"] = {"verdict": "none", "detail": {"emulator": emu.get("error", "did not run")}}
        if variant == "ptxas":
            self.ptxas_outputs = {index: res.outputs}
        elif index in self.ptxas_outputs:
            record["vs_ptxas"] = compare_outputs(spec["outputs"], res.outputs, self.ptxas_outputs[index], how="bits")
        record["sha"] = {n: hashlib.sha256(d).hexdigest()[:16] for n, d in res.outputs.items()}
        if "fail" in (record["reference"]["verdict"], record["emulator"]["verdict"]):
            self._dump(index, variant, res.outputs)
        return record

    # -- calibration

    def bench(self, index: int) -> dict:
        spec = self.bundle.calibration[index]
        sms = int(self.info.get("sms", 1))
        arch_matches = self.info.get("arch") == self.bundle.arch
        cubin = spec["cubin"].get("cubin") if spec["cubin"]["status"] == "ok" else None
        image = "ptxas" if cubin and arch_matches else "driver JIT of the PTX"
        module = None
        if image == "ptxas":
            try:
                module = self.module(cubin, label=spec["id"])
            except DeviceError as e:
                if e.sticky:
                    raise
                image = f"driver JIT of the PTX (ptxas's cubin: {e.message})"
        if module is None:
            module = self.module(spec["ptx"], is_ptx=True, label=spec["id"])
        fn, facts = self.device.function(module, spec["kernel"])
        grid, block = resolve_dims(spec["grid"], sms), resolve_dims(spec["block"], sms)
        buffers = []
        for name, b in sorted(spec["buffers"].items()):
            size = b["size"] if isinstance(b["size"], int) else b["size"]["per_cta"] * resolve(b["size"]["ctas"], sms)
            init = (lambda base, s=b["chase"], n=size: chain_bytes(s, n, base)) if "chase" in b else None
            buffers.append(Buffer(name, size, init, b.get("fill", 0)))
        repeats = 3 if spec["kind"] in ("chain", "bank", "chase") else 5
        res = self.device.run(fn, grid, block, spec["dynamic_shared_bytes"], buffers, spec["params"],
                              ["out"], repeats=repeats, time_budget_s=2.0, label=f"{spec['id']}", read="last")
        out = res.outputs["out"]
        words = list(struct.unpack("<%dQ" % (len(out) // 8), out[:len(out) // 8 * 8]))
        rows = [words[i:i + OUT_WORDS] for i in range(0, len(words) - OUT_WORDS + 1, OUT_WORDS)]
        cycles, ns, smid = [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]
        return {"status": "ok", "image": image, "facts": facts, "grid": grid, "block": block,
                "time_us": time_stats(res.times_ms), "ctas": len(rows),
                "cycles": _summary(cycles), "ns": _summary(ns), "sms_used": len(set(smid))}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.gpu_check worker")
    ap.add_argument("--bundle", required=True)
    ap.add_argument("--units", required=True, help="JSON list of units: ['launch', i, variant] or ['bench', i]")
    ap.add_argument("--results", required=True)
    ap.add_argument("--device", default="cuda", choices=("cuda", "emulator"))
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--deadline", type=float, default=0.0, help="epoch seconds: start no unit after this")
    ap.add_argument("--dump", default=None, help="folder for outputs that fail a comparison")
    args = ap.parse_args(argv)
    bundle = Bundle(Path(args.bundle))
    with open(args.results, "a") as results:
        try:
            device = open_device(args.device, bundle.arch)
            worker = Worker(bundle, device, results, args.repeats, Path(args.dump) if args.dump else None)
        except NoDevice as e:
            results.write(json.dumps({"event": "no_device", "why": str(e)}) + "\n")
            return 0
        except DeviceError as e:
            results.write(json.dumps({"event": "no_device", "why": str(e)}) + "\n")
            return 0
        worker.emit({"event": "device", "info": worker.info})
        for unit in json.loads(Path(args.units).read_text()):
            if args.deadline and time.time() > args.deadline:
                worker.emit({"event": "stop", "why": "deadline"})
                return 0
            worker.emit({"event": "begin", "unit": unit})
            t0 = time.perf_counter()
            try:
                if unit[0] == "probe":
                    record = {"status": "ok"}
                elif unit[0] == "launch":
                    record = worker.launch(unit[1], unit[2])
                else:
                    record = worker.bench(unit[1])
            except DeviceError as e:
                record = {"status": f"{e.stage} error", "error": e.message, "sticky": e.sticky}
                worker.emit({"event": "result", "unit": unit, "seconds": round(time.perf_counter() - t0, 3), **record})
                if e.sticky:
                    return STICKY_EXIT
                continue
            except Exception as e:  # noqa: BLE001 - a bug here must not lose the other units
                record = {"status": "worker error", "error": f"{type(e).__name__}: {e}"[:500]}
            worker.emit({"event": "result", "unit": unit, "seconds": round(time.perf_counter() - t0, 3), **record})
    return 0


if __name__ == "__main__":
    sys.exit(main())
