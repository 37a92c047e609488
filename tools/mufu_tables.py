"""Build the emulator's measured MUFU tables (`emu/data/mufu_sm90.npz`) from a
`tools.gpu_mufu_capture run` output folder.

RCP/RSQ/SQRT: the GPU's result minus the correctly rounded one, in units of the last place,
per input fraction (RSQ/SQRT: and exponent parity, the even exponent first), stored +2 in
two bits, four to a byte. Before writing, every sampled sweep at other exponents must give
the same differences as the table: the table is only kept where the fraction alone decides.
The 16-bit functions: the GPU's output bits for every input.

    python -m tools.mufu_tables CAPTURE_DIR [--out emu/data/mufu_sm90.npz]
"""
from __future__ import annotations

import argparse
import json
import zipfile
import zlib
from pathlib import Path

import numpy as np

EXACT = {"rcp": lambda x: 1.0 / x, "rsq": lambda x: 1.0 / np.sqrt(x), "sqrt": np.sqrt}
CORRECTLY_ROUNDED = {**EXACT, "ex2": np.exp2, "lg2": np.log2}
HALVES = ("ex2_f16", "tanh_f16", "ex2_bf16", "tanh_bf16")


class Capture:
    def __init__(self, folder: Path):
        meta = json.loads((folder / "mufu_capture.json").read_text())
        self.sweeps = {s["name"]: s for s in meta["sweeps"] if "archive" in s}
        self.device = meta["device"].get("name", "?")
        self.folder = folder

    def outputs(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(input bits, output bits) of a sweep."""
        s = self.sweeps[name]
        with zipfile.ZipFile(self.folder / s["archive"]) as z:
            diffs = np.frombuffer(zlib.decompress(z.read(name + ".z")), dtype=np.uint32)
        values = np.cumsum(diffs, dtype=np.uint64).astype(np.uint32)
        inputs = np.uint32(s["first"]) + np.arange(s["count"], dtype=np.uint32) * np.uint32(s["step"])
        return inputs, values

    def ulp_difference(self, name: str, fn: str) -> np.ndarray:
        x, v = self.outputs(name)
        with np.errstate(all="ignore"):
            exact = CORRECTLY_ROUNDED[fn](x.view(np.float32).astype(np.float64)).astype(np.float32).view(np.uint32)
        return v.astype(np.int64) - exact.astype(np.int64)


def pack2(values: np.ndarray) -> np.ndarray:
    u = (values + 2).astype(np.uint8)
    if u.max() > 3:
        raise SystemExit("a difference outside -2..1 does not fit two bits")
    return u[0::4] | (u[1::4] << 2) | (u[2::4] << 4) | (u[3::4] << 6)


def build(capture: Capture) -> dict[str, np.ndarray]:
    tables = {}
    for fn in EXACT:
        if fn == "rcp":
            full = capture.ulp_difference("rcp_e127", fn)
            by_parity = {0: full, 1: full}
        else:
            by_parity = {0: capture.ulp_difference(f"{fn}_e128", fn), 1: capture.ulp_difference(f"{fn}_e127", fn)}
            full = np.concatenate([by_parity[0], by_parity[1]])
        for name, s in capture.sweeps.items():
            if s["fn"] != fn or name in (f"{fn}_e127", f"{fn}_e128"):
                continue
            exponent = (s["first"] >> 23) & 0xFF
            sampled = capture.ulp_difference(name, fn)
            expected = by_parity[exponent & 1][::s["step"]][:len(sampled)]
            if not np.array_equal(sampled, expected):
                raise SystemExit(f"{name}: {np.count_nonzero(sampled != expected)} differences the fraction "
                                 "table does not give: it does not decide alone")
        tables[fn] = pack2(full)
    # EX2: the input as sign and magnitude, the magnitude cut to 23 fraction bits; 2^f for the
    # fraction f from one table per sign (x in [1, 2) and (-2, -1] measured whole), the whole
    # part added to the exponent. Every other EX2 sweep must follow from the two tables.
    for sign, name in ((0, "ex2_e127"), (1, "ex2_e127_neg")):
        x, v = capture.outputs(name)
        with np.errstate(all="ignore"):
            exact = np.exp2(x.view(np.float32).astype(np.float64)).astype(np.float32).view(np.uint32)
        tables["ex2_neg" if sign else "ex2_pos"] = pack2(v.astype(np.int64) - exact.astype(np.int64))
    # LG2: e + L(fraction), rounded toward zero; L from the sweeps of [1, 2) and [0.5, 1),
    # which give it rounded toward zero from above and below 1 (their outputs, kept whole:
    # deflated, consecutive outputs differing little, they take ~0.9 MB)
    for name in ("lg2_e127", "lg2_e126"):
        _, v = capture.outputs(name)
        tables[name] = np.diff(v, prepend=np.uint32(0)).astype(np.uint32)
    from emu import mufu_measured
    mufu_measured.use_tables({k: mufu_measured.unpack2(t) if k in mufu_measured.PACKED else t
                              for k, t in tables.items()})
    for name, s in capture.sweeps.items():
        model = mufu_measured.MODELS.get(s["fn"].upper())
        if model is not None:
            x, v = capture.outputs(name)
            wrong = np.count_nonzero(model(x) != v)
            if wrong:
                raise SystemExit(f"{name}: the {s['fn'].upper()} model misses {wrong} of {len(x)} results")
    for fn in HALVES:
        _, v = capture.outputs(f"{fn}_all")
        tables[fn] = v.astype(np.uint16)
    return tables


def samples(capture: Capture, per_sweep: int = 96, seed: int = 0) -> dict[str, list[list[int]]]:
    """(input bits, GPU output bits) pairs from every sweep of the tabled functions, half of
    them where the GPU's result is not the correctly rounded one (the pairs a test of the
    emulator against the GPU needs), for tests/gpu_truth."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, s in sorted(capture.sweeps.items()):
        if s["fn"] not in CORRECTLY_ROUNDED and s["fn"] not in HALVES:
            continue
        x, v = capture.outputs(name)
        if s["fn"] in CORRECTLY_ROUNDED:
            moved = np.flatnonzero(capture.ulp_difference(name, s["fn"]) != 0)
        else:
            moved = np.arange(len(x))
        pick = np.concatenate([rng.choice(moved, per_sweep // 2, replace=False),
                               rng.choice(len(x), per_sweep // 2, replace=False)])
        out[name] = [[int(x[i]), int(v[i])] for i in sorted(set(pick.tolist()))]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.mufu_tables", description=__doc__.split("\n\n")[0])
    ap.add_argument("capture", type=Path)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "emu" / "data" / "mufu_sm90.npz")
    ap.add_argument("--samples", type=Path, help="also write GPU (input, output) pairs for tests here")
    a = ap.parse_args(argv)
    capture = Capture(a.capture)
    if a.samples:
        a.samples.write_text(json.dumps({"device": capture.device, "sweeps": samples(capture)}, indent=0))
    tables = build(capture)
    np.savez_compressed(a.out, **tables)
    print(f"{a.out}: {', '.join(tables)} from {capture.device} ({a.out.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
