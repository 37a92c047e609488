"""Run ptxas's cubins of every corpus in the emulator and report every kernel it cannot
decode or run, and every hazard its checker flags.

Why: the emulator is how correctness is judged without a GPU, so it must run whatever
ptxas writes. Each launch here decodes ptxas's cubin with our own codec (no nvdisasm
fallback), runs with the hazard checker on, and is counted as

* `decode`: a word our codec cannot decode (the word and nvdisasm's text are listed);
* `fault`: anything else the emulator refuses (an unsupported instruction, a bad access …);
* `hazard`: the checker flagged ptxas's schedule (then our latency table, not ptxas, is
  wrong: correct it against `tools/latency_audit.py`'s distances);

and otherwise `ok`. Outputs are not compared here (each corpus's tests do that).

Sources: the corpora (`zluda`, `cuda`, `tinygrad` (launches of at most 4096 threads),
`triton`, `llvm`), `operand_kinds` (tools/operand_kinds.py: every operation with every
operand kind, and random chains), and `--ptx-dir DIR` for any folder of PTX files (a fuzz
campaign's programs): each `.entry` of each file is launched with a `<file>.json` beside it
in the `ptx2sass-emu` LAUNCH.json format when there is one (its `kernel` naming the entry),
else on one CTA of 32 threads with every 64-bit parameter a 64 KiB buffer of seeded bytes and
every other parameter a seeded scalar.

Usage: python -m tools.emu_sweep [--corpus NAME ...] [--ptx-dir DIR ...] [--limit N]
           [--json FILE] [-q]
Exit status 1 when anything is not `ok`.
"""
from __future__ import annotations

import argparse
import json
import math
import re
import sys
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

CORPORA = ("zluda", "cuda", "tinygrad", "triton", "llvm", "operand_kinds")
MAX_THREADS = 4096


@dataclass
class Outcome:
    name: str
    status: str                 # ok | decode | fault | hazard | skipped
    detail: str = ""
    words: dict = field(default_factory=dict)      # undecodable word (hex) -> nvdisasm's text


def _undecodable(cubin: bytes, arch: str = "sm_89") -> dict[str, str]:
    from ptx2sass import oracle
    from ptx2sass.encoder import codec
    from tools.corpus_words import words_of_listing
    bad = {}
    for w in words_of_listing(oracle.nvdisasm(cubin), arch, "sweep", False):
        try:
            codec.decode(w.word, arch, w.offset)
        except Exception:
            bad.setdefault(f"{w.word:#034x}", w.text)
    return bad


def judge(name: str, cubin: bytes | None, run) -> Outcome:
    """Run `run()` (→ a LaunchResult or an object with `.result`) and classify it."""
    from ptx2sass.emu.errors import EmuFault
    if cubin is None:
        return Outcome(name, "skipped", "ptxas rejects the PTX")
    bad = _undecodable(cubin)
    if bad:
        return Outcome(name, "decode", f"{len(bad)} words", bad)
    try:
        res = run()
    except EmuFault as e:
        return Outcome(name, "fault", str(e)[:300])
    result = getattr(res, "result", res)
    reason = getattr(res, "reason", "") or ""
    if result is None:
        return Outcome(name, "fault", reason[:300] or "no result")
    if result.hazards:
        return Outcome(name, "hazard", str(result.hazards[0]) + (f" (+{len(result.hazards) - 1} more)"
                                                                 if len(result.hazards) > 1 else ""))
    if "fault" in reason:
        return Outcome(name, "fault", reason[:300])
    return Outcome(name, "ok")


def _spread(items: list, limit: int | None) -> list:
    if not limit or limit >= len(items):
        return items
    step = len(items) / limit
    return [items[int(i * step)] for i in range(limit)]


# --- launches per source ----------------------------------------------------------------

def corpus_outcomes(corpus: str, limit: int | None = None):
    """The corpus runners default to nvdisasm's listing for decoding: ours is passed."""
    from ptx2sass import oracle
    from tools import emu_testing as t
    from ptx2sass.emu.loader import codec_decoder as ours
    if corpus == "zluda":
        for e in _spread([e for e in t.zluda_manifest() if "ptxas_error" not in e], limit):
            cubin = t.zluda_cubin(e)
            yield judge(f"zluda/{e['name']}", cubin,
                        lambda: t.run_zluda(e, hazard_check=True, cubin=cubin, decoder=ours))
    elif corpus == "cuda":
        ref = t.cuda_reference_module()
        entries = [e for e in ref.load_manifest() if not e["name"].endswith(".G")]
        for e in _spread(entries, limit):
            build = oracle.ptxas((t.CUDA_DIR / e["ptx"]).read_text(), "sm_89", name=e["ptx"])
            yield judge(f"cuda/{e['name']}", build.output if build.ok else None,
                        lambda: t.run_cuda_launch(e, ref, hazard_check=True, decoder=ours))
    elif corpus == "tinygrad":
        entries = sorted((e for e in t.tinygrad_manifest()
                          if math.prod(e["grid"]) * math.prod(e["block"]) <= MAX_THREADS),
                         key=lambda e: e["sha256"])
        for e in _spread(entries, limit):
            cubin = t.tinygrad_cubin(e)
            yield judge(f"tinygrad/{e['file']}", cubin,
                        lambda: t.run_tinygrad(e, cubin=cubin, hazard_check=True, decoder=ours))
    elif corpus in ("triton", "llvm"):
        import importlib
        mod = importlib.import_module(f"{corpus}_corpus")
        folder = REPO / "tests" / "corpus" / corpus
        entries = mod.runnable() if corpus == "llvm" else mod.manifest()
        for e in _spread(entries, limit):
            build = oracle.ptxas((folder / e["file"]).read_text(), "sm_89", name=e["file"])
            cubin = build.output if build.ok else None
            yield judge(f"{corpus}/{e['file']}:{e['entry']}", cubin,
                        lambda: mod.launch(e, cubin, hazard_check=True, decoder=ours)[0])
    elif corpus == "operand_kinds":
        from tools import operand_kinds as ok
        for op in _spread(ok.OPS, limit):
            build = oracle.ptxas(ok.op_module(op), "sm_89")
            cubin = build.output if build.ok else None

            def run_all(op=op, cubin=cubin):
                data, params = ok.inputs(op)
                last = None
                for combo in ok.kind_combos(op):
                    _, last = ok.launch(cubin, op, combo, data, params)
                    if last.hazards:
                        return last
                return last
            yield judge(f"operand_kinds/{op.name}", cubin, run_all)
        seeds = range(limit or ok.SEED_CHAINS)
        build = oracle.ptxas(ok.chain_module(seeds), "sm_89")
        cubin = build.output if build.ok else None
        for seed in seeds:
            yield judge(f"operand_kinds/chain_{seed}", cubin,
                        lambda seed=seed: ok.launch_chain(cubin, seed)[1])
    else:
        raise SystemExit(f"unknown corpus {corpus!r} (known: {', '.join(CORPORA)})")


_ENTRY = re.compile(r"\.entry\s+([A-Za-z_$%][\w$]*)\s*\(([^)]*)\)", re.S)
_PARAM = re.compile(r"\.param\s+\.(\w+)(?:\s+\.ptr[^\s]*)*(?:\s+\.align\s+\d+)?\s+[\w$%]+(?:\[(\d+)\])?")


def default_launch(ptx: str, kernel: str, seed: int):
    """One CTA of 32 threads; a 64-bit parameter is a 64 KiB buffer of seeded bytes, other
    parameters seeded scalars (byte arrays: seeded bytes)."""
    from ptx2sass.emu.launch import Param
    m = next((m for m in _ENTRY.finditer(ptx) if m.group(1) == kernel), None)
    rng = np.random.default_rng(seed)
    params = []
    for p in _PARAM.finditer(m.group(2) if m else ""):
        ty, count = p.group(1), p.group(2)
        if count is not None:
            params.append(Param(type="bytes", value=rng.integers(0, 256, int(count), dtype=np.uint8).tobytes()))
        elif ty in ("u64", "s64", "b64"):
            params.append(rng.integers(0, 256, 1 << 16, dtype=np.uint8))
        else:
            kind = {"f32": "f32", "f64": "f64"}.get(ty, ty if ty in ("u8", "s8", "u16", "s16", "u32", "s32") else "u32")
            value = float(rng.standard_normal()) if kind.startswith("f") else int(rng.integers(0, 64))
            params.append(Param(type=kind, value=value))
    return (1, 1, 1), (32, 1, 1), params


def ptx_dir_outcomes(folder: Path, limit: int | None = None):
    from ptx2sass import oracle
    from ptx2sass.emu.launch import Param, run
    from tools.corpora import entry_names
    for path in _spread(sorted(folder.rglob("*.ptx")), limit):
        ptx = path.read_text()
        build = oracle.ptxas(ptx, "sm_89", name=path.name)
        cubin = build.output if build.ok else None
        spec_path = path.with_suffix(".json")
        spec = json.loads(spec_path.read_text()) if spec_path.is_file() else None
        for kernel in entry_names(ptx):
            if spec is not None and spec.get("kernel", kernel) != kernel:
                continue
            seed = zlib.crc32(f"{path.name}:{kernel}".encode())

            def go(kernel=kernel, seed=seed, spec=spec):
                if spec is None:
                    grid, block, params = default_launch(ptx, kernel, seed)
                    return run(cubin, kernel, grid, block, params, hazard_check=True)
                buffers, params = {}, []
                for name, b in spec.get("buffers", {}).items():
                    data = (spec_path.parent / b["file"]).read_bytes() if "file" in b else \
                        bytes([b.get("fill", 0)]) * b["size"]
                    buffers[name] = np.frombuffer(bytearray(data), np.uint8)
                for p in spec.get("params", []):
                    params.append(buffers[p["buffer"]] if "buffer" in p else Param(type=p["type"], value=p["value"]))
                return run(cubin, kernel, tuple(spec["grid"]), tuple(spec["block"]), params,
                           dynamic_shared_bytes=spec.get("dynamic_shared_bytes", 0), hazard_check=True)
            yield judge(f"{path.relative_to(folder)}:{kernel}", cubin, go)


# --- report ---------------------------------------------------------------------------------

def sweep(corpora=CORPORA, ptx_dirs=(), limit: int | None = None, progress=None) -> list[Outcome]:
    out = []
    sources = [(c, corpus_outcomes(c, limit)) for c in corpora] + \
        [(str(d), ptx_dir_outcomes(Path(d), limit)) for d in ptx_dirs]
    for _, outcomes in sources:
        for o in outcomes:
            out.append(o)
            if progress:
                progress(o)
    return out


def report(outcomes: list[Outcome], out=sys.stdout) -> None:
    by_source: dict[str, Counter] = {}
    for o in outcomes:
        by_source.setdefault(o.name.split("/", 1)[0], Counter())[o.status] += 1
    print(f"{'source':<16} {'launched':>8} {'ok':>6} {'decode':>7} {'fault':>6} {'hazard':>7} {'skipped':>8}", file=out)
    for src, c in by_source.items():
        launched = sum(c.values()) - c["skipped"]
        print(f"{src:<16} {launched:>8} {c['ok']:>6} {c['decode']:>7} {c['fault']:>6} {c['hazard']:>7} "
              f"{c['skipped']:>8}", file=out)
    words: dict[str, str] = {}
    for o in outcomes:
        words.update(o.words)
    for o in outcomes:
        if o.status in ("fault", "hazard"):
            print(f"{o.status}: {o.name}: {o.detail}", file=out)
    for word, text in sorted(words.items(), key=lambda kv: kv[1]):
        print(f"cannot decode: {word}  {text}", file=out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", action="append", choices=CORPORA, default=None)
    ap.add_argument("--ptx-dir", action="append", default=[], help="a folder of PTX programs (fuzz campaign)")
    ap.add_argument("--limit", type=int, default=None, help="at most N launches per source (even spread)")
    ap.add_argument("--json", type=Path, help="write every outcome here")
    ap.add_argument("-q", "--quiet", action="store_true")
    args = ap.parse_args(argv)
    corpora = args.corpus if args.corpus is not None else (() if args.ptx_dir else CORPORA)

    def progress(o: Outcome):
        if not args.quiet and o.status != "ok":
            print(f"  {o.status}: {o.name}", file=sys.stderr)
    outcomes = sweep(corpora, args.ptx_dir, args.limit, progress)
    report(outcomes)
    if args.json:
        args.json.write_text(json.dumps([o.__dict__ for o in outcomes], indent=1))
    return 1 if any(o.status not in ("ok", "skipped") for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
