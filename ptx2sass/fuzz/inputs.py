"""Deterministic launches for fuzz programs: the `Case` (PTX text plus everything needed to
run and compare it) and the bytes of its buffers.

A Case is plain data (JSON in a regression test's header), so a reduced test runs without
the generator. Input values depend only on (seed, register id), so deleting statements
while reducing does not change the values the remaining registers start with. Each value
is drawn from its register's view: special values of the type (zeros, infinities, NaNs
with payloads, subnormals, the extremes) a third of the time, small or round numbers
another part, random bit patterns the rest.
"""
from __future__ import annotations

import json
import struct
from dataclasses import asdict, dataclass, field

import numpy as np

from ptx2sass.fuzz.program import (BLOB_BYTES, COUNTER_BYTES, GLOBAL_COUNTER_OPS, PRIVATE_BYTES, SLOT_BYTES,
                                   WARP_SCRATCH, Program, render)

INPUTS_VERSION = 1
DATA_BYTES = 16384 + 64      # data-dependent loads reach 8 KiB; records of many threads more
OUT_FILL = 0xA5

SPECIAL = {
    "f16": [0x0000, 0x8000, 0x3C00, 0xBC00, 0x7C00, 0xFC00, 0x7E00, 0x7C01, 0xFE00, 0x0001, 0x8001,
            0x03FF, 0x7BFF, 0xFBFF, 0x0400, 0x3555, 0x5640],
    "bf16": [0x0000, 0x8000, 0x3F80, 0xBF80, 0x7F80, 0xFF80, 0x7FC0, 0x7F81, 0xFFC1, 0x0001, 0x8001,
             0x007F, 0x7F7F, 0xFF7F, 0x0080, 0x3EAB, 0x4B80],
    "f32": [0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x7F800000, 0xFF800000, 0x7FC00000,
            0x7F800001, 0xFFC00001, 0x00000001, 0x80000001, 0x007FFFFF, 0x7F7FFFFF, 0xFF7FFFFF,
            0x00800000, 0x7FFFFFFF, 0x4B000000, 0x4F000000, 0xCF000000, 0x5F000000, 0x3EAAAAAB,
            0x40490FDB, 0x3F000000, 0x4B7FFFFF],
    "f64": [0x0, 0x8000000000000000, 0x3FF0000000000000, 0xBFF0000000000000, 0x7FF0000000000000,
            0xFFF0000000000000, 0x7FF8000000000000, 0x7FF0000000000001, 0xFFF8000000000001, 0x1,
            0x8000000000000001, 0x000FFFFFFFFFFFFF, 0x7FEFFFFFFFFFFFFF, 0xFFEFFFFFFFFFFFFF,
            0x0010000000000000, 0x41E0000000000000, 0xC3E0000000000000, 0x3FD5555555555555,
            0x47EFFFFFE0000000, 0x36A0000000000000],
}
NICE = {"f16": [0x3800, 0x4000, 0x4200, 0xC500, 0x5BF8, 0x2E66], "bf16": [0x3F00, 0x4000, 0x4040, 0xC0A0],
        "f32": [0x3F000000, 0x40000000, 0x40400000, 0xC0A00000, 0x42C80000, 0x3DCCCCCD, 0x447A0000,
                0xC2F60000],
        "f64": [0x3FE0000000000000, 0x4000000000000000, 0x4008000000000000, 0xC014000000000000,
                0x4059000000000000, 0x3FB999999999999A]}
BITS = {"u8": 8, "s8": 8, "u16": 16, "s16": 16, "b16": 16, "f16": 16, "bf16": 16, "u32": 32, "s32": 32,
        "b32": 32, "f32": 32, "f16x2": 32, "bf16x2": 32, "u64": 64, "s64": 64, "b64": 64, "f64": 64,
        "pred": 8, "blob": 64}
# the emulator's scalar parameter formats, by PTX parameter type (bit patterns are passed raw)
PARAM_FORMAT = {"blob": "u64", "u8": "u8", "s8": "u8", "u16": "u16", "s16": "u16", "b16": "u16", "u32": "u32", "s32": "u32",
                "b32": "u32", "f32": "u32", "u64": "u64", "s64": "u64", "b64": "u64", "f64": "u64"}


@dataclass
class Case:
    """One runnable fuzz program: PTX text, launch, how inputs are made, how outputs compare."""
    text: str
    seed: int
    grid: tuple
    block: tuple
    fmad: bool = True
    record: int = 16
    inputs: list = field(default_factory=list)    # (offset, load type, view, reg id)
    params: list = field(default_factory=list)    # (name, param type, view, reg id)
    slots: list = field(default_factory=list)     # (reg name, kind, float views, tolerance, key, where)
    features: list = field(default_factory=list)
    keys: list = field(default_factory=list)      # coverage: instruction keys
    spaces: list = field(default_factory=list)
    shapes: list = field(default_factory=list)
    pressure: str = ""
    objects: dict = field(default_factory=dict)   # texture/surface descriptors by name (fuzz/textures.py)
    kernel: str = "fuzz_kernel"
    version: int = INPUTS_VERSION
    arch: str = "sm_89"       # the GPU both compilers target (the PTX says `.target sm_89`)

    @property
    def threads(self) -> int:
        g, b = self.grid, self.block
        return g[0] * g[1] * g[2] * b[0] * b[1] * b[2]

    def to_json(self, with_text: bool = False) -> dict:
        d = asdict(self)
        if not with_text:
            d.pop("text")
        d["grid"], d["block"] = list(self.grid), list(self.block)
        return d

    @classmethod
    def from_json(cls, d: dict, text: str | None = None) -> "Case":
        d = dict(d)
        if text is not None:
            d["text"] = text
        d["grid"], d["block"] = tuple(d["grid"]), tuple(d["block"])
        d["inputs"] = [tuple(x) for x in d.get("inputs", [])]
        d["params"] = [tuple(x) for x in d.get("params", [])]
        d["slots"] = [tuple(x) if not isinstance(x[2], list) else (x[0], x[1], tuple(x[2]), *x[3:])
                      for x in d.get("slots", [])]
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in d.items() if k in known})


def case_from_program(prog: Program, rendered=None) -> Case:
    r = rendered or render(prog)
    return Case(r.text, prog.seed, tuple(prog.grid), tuple(prog.block), prog.fmad, r.record_bytes,
                list(r.inputs), list(r.params),
                [(s.name, s.kind, s.floats, s.tolerance, s.key, s.where) for s in r.slots],
                list(prog.features), r.keys, r.spaces, r.shapes, prog.pressure,
                {n: d for n, d in prog.objects.items() if any(p[2] == n for p in r.params if p[1] == "handle")})


# ------------------------------------------------------------------------------ values

def _rng(seed: int, salt: int) -> np.random.Generator:
    return np.random.default_rng([seed & 0xFFFFFFFF, seed >> 32 & 0xFFFFFFFF, salt & 0xFFFFFFFF, 0x5EED])


def values(view: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """`n` bit patterns (uint64) for a value of `view`."""
    bits = BITS[view]
    if view == "pred":
        return rng.integers(0, 2, n).astype(np.uint64) * rng.integers(1, 256, n).astype(np.uint64)
    if view in ("f16x2", "bf16x2"):
        half = view[:-2]
        lo, hi = values(half, n, rng), values(half, n, rng)
        return lo | (hi << np.uint64(16))
    out = rng.integers(0, 1 << min(bits, 63), n, dtype=np.uint64)
    if bits == 64:
        out |= rng.integers(0, 2, n, dtype=np.uint64) << np.uint64(63)
    pick = rng.random(n)
    if view in SPECIAL:
        special = np.array(SPECIAL[view], dtype=np.uint64)
        nice = np.array(NICE[view], dtype=np.uint64)
        out = np.where(pick < 0.35, special[rng.integers(0, len(special), n)], out)
        out = np.where((pick >= 0.35) & (pick < 0.6), nice[rng.integers(0, len(nice), n)], out)
        return out
    mask = (1 << bits) - 1
    signed = view[0] == "s"
    edges = [0, 1, 2, 3, mask, mask - 1, 1 << (bits - 1), (1 << (bits - 1)) - 1, 7, 8, 16, 31, 32, 33, 255, 256]
    edge = np.array([e & mask for e in edges], dtype=np.uint64)
    small = rng.integers(-40 if signed else 0, 41, n).astype(np.int64).astype(np.uint64) & np.uint64(mask)
    out = np.where(pick < 0.3, edge[rng.integers(0, len(edge), n)], out)
    out = np.where((pick >= 0.3) & (pick < 0.6), small, out)
    return out & np.uint64(mask)


def _store(buf: np.ndarray, offsets: np.ndarray, vals: np.ndarray, size: int) -> None:
    for k in range(size):
        buf[offsets + k] = ((vals >> np.uint64(8 * k)) & np.uint64(0xFF)).astype(np.uint8)


@dataclass
class LaunchData:
    params: list           # emulator Params, in order
    buffers: dict          # name -> (size, initial bytes)
    out_bytes: int
    objects: list = field(default_factory=list)   # texture/surface objects, bound 1, 2, … in order


def launch_data(case: Case) -> LaunchData:
    from ptx2sass.emu.launch import Param
    threads = case.threads
    nslots = max(1, len(case.slots))
    in_size = max(DATA_BYTES, case.record * threads + 64)
    inb = np.zeros(in_size, dtype=np.uint8)
    # background: every byte defined, a mix of float and integer patterns
    bg = values("f32", in_size // 4, _rng(case.seed, 0xB6))
    ints = values("u32", in_size // 4, _rng(case.seed, 0xB7))
    bg = np.where(_rng(case.seed, 0xB8).random(in_size // 4) < 0.5, bg, ints)
    inb[:in_size // 4 * 4] = bg.astype(np.uint32).view(np.uint8)
    base = np.arange(threads, dtype=np.int64) * case.record
    for offset, ltype, view, reg in case.inputs:
        size = BITS[ltype] // 8 if ltype != "pred" else 1
        draw_view = view if BITS.get(view) == BITS[ltype] or view in ("pred",) else ltype
        if ltype in ("u8", "s8", "u16", "s16", "u32", "s32") and draw_view != ltype:
            draw_view = ltype
        v = values(draw_view, threads, _rng(case.seed, 1000 + reg))
        _store(inb, base + offset, v, size)
    counters = np.zeros(COUNTER_BYTES // 8, dtype=np.uint64)
    crng = _rng(case.seed, 0xC0)
    for i, op in enumerate(GLOBAL_COUNTER_OPS):
        if op.startswith(("add.f", "inc", "dec")):
            counters[i] = 0 if op.startswith("add.f") else crng.integers(0, 1001)
        elif op.startswith("min"):
            counters[i] = crng.integers(0, 1 << 62)
        else:
            counters[i] = crng.integers(0, 1 << 40)
    private = values("u64", threads * PRIVATE_BYTES // 8, _rng(case.seed, 0xC1))
    scratch = np.zeros(-(-threads // 32) * WARP_SCRATCH // 8, dtype=np.uint64)    # what wmma.store writes
    atom = np.concatenate([counters, private, scratch]).view(np.uint8)
    out_size = threads * nslots * SLOT_BYTES
    params = [Param(buffer="out"), Param(buffer="in"), Param(buffer="atom")]
    objects = []
    for name, ptype, view, reg in case.params:
        if ptype == "handle":              # a texture/surface: bound in parameter order
            from ptx2sass.emu.textures import KIND_BIT
            from ptx2sass.fuzz.textures import build
            obj = build(case.objects[view], case.seed)
            objects.append(obj)
            kind = "surface" if case.objects[view]["kind"].startswith("surface") else "texture"
            params.append(Param(type="u64", value=KIND_BIT[kind] | len(objects)))
            continue
        draw = view if BITS.get(view) == BITS[ptype] else ptype
        v = int(values(draw, 1, _rng(case.seed, 2000 + reg))[0]) & ((1 << BITS[ptype]) - 1)
        if ptype == "blob":
            # every byte of the .param blob defined: its first 8 the value above, the rest
            # drawn apart (a launch that passed 8 bytes left 24 undefined on the GPU)
            rest = values("u64", BLOB_BYTES // 8 - 1, _rng(case.seed, 0xB10B))
            data = struct.pack("<Q", v) + rest.astype("<u8").tobytes()
            params.append(Param(type="bytes", value=data))
            continue
        params.append(Param(type=PARAM_FORMAT[ptype], value=v))
    buffers = {"out": (out_size, bytes([OUT_FILL]) * out_size), "in": (in_size, inb.tobytes()),
               "atom": (atom.nbytes, atom.tobytes())}
    return LaunchData(params, buffers, out_size, objects)


def case_header(case: Case, extra: dict | None = None) -> str:
    """The `// fuzz-case: {...}` comment lines a regression test's .ptx starts with."""
    meta = case.to_json()
    meta.update(extra or {})
    text = json.dumps(meta, sort_keys=True, separators=(",", ":"))
    lines = [text[i:i + 110] for i in range(0, len(text), 110)]
    return "".join(f"// fuzz-case: {line}\n" for line in lines)


def read_case(text: str) -> Case | None:
    """A Case from a .ptx file with a `// fuzz-case:` header (None when it has none)."""
    parts = [line[len("// fuzz-case: "):] for line in text.splitlines() if line.startswith("// fuzz-case: ")]
    if not parts:
        return None
    meta = json.loads("".join(parts))
    return Case.from_json(meta, text)


def case_meta(text: str) -> dict:
    parts = [line[len("// fuzz-case: "):] for line in text.splitlines() if line.startswith("// fuzz-case: ")]
    return json.loads("".join(parts)) if parts else {}


def pack_param(ptype: str, value: int) -> bytes:
    return struct.pack({"u8": "<B", "u16": "<H", "u32": "<I", "u64": "<Q"}[PARAM_FORMAT[ptype]], value)
