"""Per-architecture SM facts for the timing model, read from `gpus.json` through the
compilation `Target` (so "sm_90a" finds sm_90's facts); no arch tests in code."""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

from ptx2sass.encoder.arch import Target, target

DATA = Path(__file__).with_name("gpus.json")


class NoTimingFacts(KeyError):
    """The architecture has no entry in gpus.json."""


@dataclass(frozen=True)
class SmFacts:
    arch: str
    gpu: str
    sms: int
    clock_mhz: int
    sub_partitions: int
    max_warps: int
    max_ctas: int
    max_threads_per_cta: int
    registers: int
    max_registers_per_thread: int
    register_unit: int
    shared_per_sm: int
    shared_per_cta: int
    shared_reserved_per_cta: int
    shared_unit: int
    shared_carveouts_kb: tuple
    unified_l1_kb: int
    throughput: dict          # pipe -> results per clock per SM
    latency: dict             # pipe -> dependent-issue latency (cycles)
    memory: dict
    opcode_pipe: dict         # SASS opcode -> pipe
    tensor_f32_accumulate: float = 1.0    # tensor rate with f32 accumulators, over the f16 one

    def pipe(self, opcode: str) -> str:
        return self.opcode_pipe.get(opcode, "alu")

    def issue_cycles(self, pipe: str) -> float:
        """Cycles one warp instruction holds its sub-partition's pipe (32 results)."""
        per_sp = self.throughput[pipe] / self.sub_partitions
        return 32.0 / per_sp

    @property
    def dram_bytes_per_clk(self) -> float:
        return self.memory["dram_gbps"] * 1e9 / (self.clock_mhz * 1e6)


def load_table(path: Path = DATA) -> dict:
    return json.loads(path.read_text())


@functools.cache
def _facts(name: str, path: str) -> SmFacts:
    table = load_table(Path(path))
    try:
        row = table["arch"][name]
    except KeyError:
        raise NoTimingFacts(f"no timing facts for {name}; known: {', '.join(table['arch'])}") from None
    opcode_pipe = {op: pipe for pipe, ops in table["opcode_pipes"].items() for op in ops}
    fields = {k: row[k] for k in SmFacts.__dataclass_fields__ if k in row}
    fields["shared_carveouts_kb"] = tuple(row["shared_carveouts_kb"])
    return SmFacts(arch=name, opcode_pipe=opcode_pipe, **fields)


def facts_for(arch: "str | Target", path: Path = DATA) -> SmFacts:
    """The SM facts of `arch` (a name or a Target)."""
    return _facts(target(arch).name, str(path))


def update(arch: "str | Target", values: dict, source: str, path: Path = DATA) -> None:
    """Set measured constants of `arch`'s entry (`{"memory.l1_latency": 31, "latency.fma": 4}`)
    and record where they came from in the section's `*_source` field: what a fit of GPU
    timings (tools/fit_timing.py) calls to move the model onto a measured card."""
    table = load_table(path)
    row = table["arch"][target(arch).name]
    for key, value in values.items():
        section, _, name = key.partition(".")
        if section not in ("latency", "memory", "throughput") or name not in row[section]:
            raise KeyError(f"unknown timing constant {key!r}")
        row[section][name] = value
        note = f"{name} = {value}: {source}"
        field = f"{section}_source"
        if isinstance(row.get(field), dict):
            row[field][name] = note
        else:
            row[field] = f"{row.get(field, '')}; {note}".lstrip("; ")
    path.write_text(json.dumps(table, indent=1) + "\n")
    _facts.cache_clear()


def main(argv=None) -> int:
    import argparse
    ap = argparse.ArgumentParser(description="Set measured timing constants in gpus.json.")
    ap.add_argument("arch")
    ap.add_argument("values", nargs="+", help="section.name=value, e.g. memory.l2_latency=214")
    ap.add_argument("--source", required=True, help="where the figures come from (a GPU report)")
    args = ap.parse_args(argv)
    values = {}
    for item in args.values:
        key, _, value = item.partition("=")
        values[key] = float(value) if "." in value else int(value)
    update(args.arch, values, args.source)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
