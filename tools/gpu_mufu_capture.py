"""Measure the multi-function unit (MUFU) of a lent GPU over whole input ranges, so that the
emulator can reproduce its approximations bit for bit.

`prepare` (here, with the pinned ptxas) writes one sm_XX cubin per function, each kernel a
single MUFU of a swept input; `run` (on the GPU machine: the standard library and libcuda
only) launches every sweep and writes the results, compressed, under `--out`.

A sweep is (function, first input bits, step, count): thread i feeds the bits
`first + i * step` (a 32-bit pattern; a half's in the low 16 bits) and stores its output's
bits minus the previous input's output bits (its own for i = 0). Consecutive outputs of a
smooth function differ by little, so 2^23 results deflate from 32 MiB to about 0.2-2 MiB
(`tools.mufu_tables.Capture` adds them back up). The `sin`/`cos` kernels are patched after
ptxas so that MUFU sees the swept value itself: ptxas scales the argument by 1/(2 pi) with an
`FMUL.RZ` first, and its immediate is set to 1.0 (exact for every normal input; MUFU
flushes subnormals).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import struct
import sys
import time
import zipfile
import zlib
from pathlib import Path

BLOCK = 256
ONE_OVER_TWO_PI = 0x3E22F983      # what ptxas's FMUL.RZ before MUFU.SIN/COS multiplies by

# PTX of each function: the instruction, the register type it reads and writes, and the
# guard that the cubin holds exactly one MUFU of the expected kind
FUNCTIONS = {
    "rcp": ("rcp.approx.ftz.f32", "f32", "MUFU.RCP"),
    "rsq": ("rsqrt.approx.ftz.f32", "f32", "MUFU.RSQ"),
    "sqrt": ("sqrt.approx.ftz.f32", "f32", "MUFU.SQRT"),
    "ex2": ("ex2.approx.ftz.f32", "f32", "MUFU.EX2"),
    "lg2": ("lg2.approx.ftz.f32", "f32", "MUFU.LG2"),
    "sin": ("sin.approx.ftz.f32", "f32", "MUFU.SIN"),
    "cos": ("cos.approx.ftz.f32", "f32", "MUFU.COS"),
    "tanh": ("tanh.approx.f32", "f32", "MUFU.TANH"),
    "ex2_f16": ("ex2.approx.f16", "f16", "MUFU.EX2.F16"),
    "tanh_f16": ("tanh.approx.f16", "f16", "MUFU.TANH.F16"),
    "ex2_bf16": ("ex2.approx.ftz.bf16", "bf16", "MUFU.EX2.BF16"),
    "tanh_bf16": ("tanh.approx.bf16", "bf16", "MUFU.TANH.BF16"),
}


def _f32(exponent: int, sign: int = 0) -> int:
    return (sign << 31) | (exponent << 23)


MANTISSAS = 1 << 23


def sweeps() -> list[tuple[str, str, int, int, int]]:
    """(name, function, first bits, step, count), most wanted first: `run` stops adding
    sweeps to its output once the output budget is spent."""
    out = []

    def every_mantissa(fn, exponent, sign=0, step=1):
        out.append((f"{fn}_e{exponent}{'_neg' if sign else ''}{'_s%d' % step if step > 1 else ''}",
                    fn, _f32(exponent, sign), step, MANTISSAS // step))

    # the 16-bit functions: every input
    for fn in ("ex2_f16", "tanh_f16", "ex2_bf16", "tanh_bf16"):
        out.append((f"{fn}_all", fn, 0, 1, 1 << 16))
    # reciprocal: the mantissa should decide it; other exponents sampled to check
    every_mantissa("rcp", 127)
    # square roots: the mantissa and the exponent's parity
    for fn in ("rsq", "sqrt"):
        every_mantissa(fn, 127)
        every_mantissa(fn, 128)
    # ex2: x in [1, 2) and [-1, -0.5), [0.5, 1) (fraction bits at fixed point), finer inputs
    for exponent, sign in ((127, 0), (126, 0), (126, 1), (127, 1), (120, 0)):
        every_mantissa("ex2", exponent, sign)
    # lg2 of [1, 2), [0.5, 1), [2, 4) and far from 1
    for exponent in (127, 126, 128, 200):
        every_mantissa("lg2", exponent)
    # sin/cos in revolutions: [0.5, 1), [0.25, 0.5), small arguments
    for fn in ("sin", "cos"):
        for exponent in (126, 125, 120):
            every_mantissa(fn, exponent)
    # tanh: around its knee
    for exponent in (126, 127, 124, 128):
        every_mantissa("tanh", exponent)
    # other exponents, sampled (every 8th mantissa), to test what the full sweeps suggest
    for fn, exponents in (("rcp", (1, 64, 200, 252)), ("rsq", (1, 2, 200, 253)),
                          ("sqrt", (1, 2, 200, 253)), ("lg2", (1, 60, 129, 254)),
                          ("ex2", (128, 129, 110)), ("sin", (127, 124, 100)), ("cos", (127, 124, 100)),
                          ("tanh", (120, 129, 110))):
        for exponent in exponents:
            every_mantissa(fn, exponent, step=8)
    return out


def validation_sweeps() -> list[tuple[str, str, int, int, int]]:
    """The second capture: what the first one's models (emu/mufu_measured.py) predict but
    were not measured on (negative inputs, every exponent, the range ends), then data for
    the functions not yet modelled (LG2 at every exponent, SIN/COS over [2^-24, 1), TANH)."""
    out = []

    def sampled(fn, exponent, sign=0, step=8):
        out.append((f"{fn}_e{exponent}{'_neg' if sign else ''}_s{step}", fn, _f32(exponent, sign), step,
                    MANTISSAS // step))

    for exponent in (0, 1, 2, 3, 126, 127, 128, 252, 253, 254):
        sampled("rcp", exponent, 1)
        sampled("rcp", exponent, 0, 64)
    for fn in ("rsq", "sqrt"):
        for exponent in (0, 1, 2, 253, 254):
            sampled(fn, exponent, 0, 64)
        sampled(fn, 127, 1, 64)
    for exponent in range(96, 136):
        sampled("ex2", exponent, 0, 64)
        sampled("ex2", exponent, 1, 64)
    out.append(("ex2_specials", "ex2", 0x7F7FFF00, 1, 512))           # max normal .. inf .. NaNs
    out.append(("ex2_specials_neg", "ex2", 0xFF7FFF00, 1, 512))
    for exponent in range(1, 255):
        sampled("lg2", exponent, 0, 16)
    for fn in ("sin", "cos"):
        for exponent in range(103, 127):
            out.append((f"{fn}_e{exponent}", fn, _f32(exponent), 1, MANTISSAS))
    for exponent in range(100, 134):
        sampled("tanh", exponent, 0, 16)
    return out


# --------------------------------------------------------------------------- prepare

def kernel_ptx(fn: str, arch: str) -> str:
    instruction, kind, _ = FUNCTIONS[fn]
    if kind == "f32":
        load = "mov.b32 %f1, %r8;"
        again = "mov.b32 %f1, %r10;"
        regs = ".reg .f32 %f<4>;"
        op1, op2 = f"{instruction} %f2, %f1;", f"{instruction} %f3, %f1;"
        out1, out2 = "mov.b32 %r9, %f2;", "mov.b32 %r11, %f3;"
    else:
        load = "cvt.u16.u32 %h0, %r8; mov.b16 %g1, %h0;"
        again = "cvt.u16.u32 %h0, %r10; mov.b16 %g1, %h0;"
        regs = ".reg .b16 %h<4>; .reg .b16 %g<4>;"     # f16 and bf16 values live in .b16 registers
        op1, op2 = f"{instruction} %g2, %g1;", f"{instruction} %g3, %g1;"
        out1 = "mov.b16 %h1, %g2; cvt.u32.u16 %r9, %h1;"
        out2 = "mov.b16 %h2, %g3; cvt.u32.u16 %r11, %h2;"
    return f"""
.version 8.7
.target {arch}
.address_size 64

.visible .entry mufu_{fn}(.param .u64 out, .param .u32 first, .param .u32 step, .param .u32 count)
{{
    .reg .b32 %r<16>;
    .reg .b64 %rd<4>;
    .reg .pred %p<3>;
    {regs}
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mad.lo.u32 %r4, %r1, %r2, %r3;
    ld.param.u32 %r5, [count];
    setp.ge.u32 %p1, %r4, %r5;
    @%p1 bra DONE;
    ld.param.u32 %r6, [first];
    ld.param.u32 %r7, [step];
    mad.lo.u32 %r8, %r4, %r7, %r6;
    {load}
    {op1}
    {out1}
    sub.u32 %r10, %r8, %r7;
    {again}
    {op2}
    {out2}
    setp.eq.u32 %p2, %r4, 0;
    selp.b32 %r11, 0, %r11, %p2;
    sub.u32 %r12, %r9, %r11;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r4, 4;
    add.s64 %rd2, %rd2, %rd3;
    st.global.u32 [%rd2], %r12;
DONE:
    ret;
}}
"""


def _set_prescale_to_one(cubin: bytes, arch: str) -> tuple[bytes, int]:
    """The cubin with every FMUL whose immediate is 1/(2 pi) multiplying by 1.0 instead; how
    many were changed."""
    from tools.gpu_check.variants import rewrite
    changed = []

    def one(word: int, control: int, op: str, index: int) -> int:
        # FMUL's immediate form holds its 32-bit immediate in bits 32..63
        if op == "FMUL" and (word >> 32) & 0xFFFFFFFF == ONE_OVER_TWO_PI:
            changed.append(index)
            return (word & ~(0xFFFFFFFF << 32)) | (0x3F800000 << 32)
        return word
    return rewrite(cubin, arch, one), len(changed)


def prepare(out: Path, arch: str, second: bool = False) -> None:
    from ptx2sass import oracle
    out.mkdir(parents=True, exist_ok=True)
    cubins = {}
    for fn, (_, _, mufu) in FUNCTIONS.items():
        run = oracle.ptxas(kernel_ptx(fn, arch), arch)
        if not run.ok:
            raise SystemExit(f"ptxas refused mufu_{fn}: {run.stderr}")
        cubin = run.output
        if fn in ("sin", "cos"):
            cubin, changed = _set_prescale_to_one(cubin, arch)
            if changed != 2:
                raise SystemExit(f"mufu_{fn}: expected 2 prescales, found {changed}")
        listing = oracle.nvdisasm(cubin)
        mufus = [line for line in listing.splitlines() if "MUFU." in line]
        if len(mufus) != 2 or not all(mufu + " " in line or mufu + "." in line for line in mufus):
            raise SystemExit(f"mufu_{fn}: expected two {mufu}, got {mufus}")
        (out / f"mufu_{fn}.cubin").write_bytes(cubin)
        cubins[fn] = hashlib.sha256(cubin).hexdigest()
    manifest = {"arch": arch, "cubins": cubins, "sweeps": validation_sweeps() if second else sweeps(),
                "block": BLOCK}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    print(f"mufu bundle for {arch}: {len(cubins)} cubins, {len(manifest['sweeps'])} sweeps in {out}")


# --------------------------------------------------------------------------- run

def run(bundle: Path, out: Path, device_kind: str, budget_bytes: int, file_bytes: int,
        scale: int, select: str | None) -> int:
    import re
    from tools.gpu_check.device import Buffer, open_device
    manifest = json.loads((bundle / "manifest.json").read_text())
    device = open_device(device_kind, manifest["arch"])
    out.mkdir(parents=True, exist_ok=True)
    info = device.info()
    modules = {}
    spent = 0
    archive_index = 0
    archive = None
    archive_size = 0
    results = {"device": info, "sweeps": []}
    t0 = time.time()
    for name, fn, first, step, count in manifest["sweeps"]:
        if select and not re.search(select, name):
            continue
        count = max(1, count // scale)
        if fn not in modules:
            module = device.load((bundle / f"mufu_{fn}.cubin").read_bytes(), label=fn)
            modules[fn] = device.function(module, f"mufu_{fn}")[0]
        params = [{"buffer": "out"}] + [{"type": "u32", "value": v, "bytes": struct.pack("<I", v).hex()}
                                         for v in (first, step, count)]
        grid = ((count + BLOCK - 1) // BLOCK, 1, 1)
        try:
            got = device.run(modules[fn], grid, (BLOCK, 1, 1), 0, [Buffer("out", 4 * count)], params,
                             ["out"], label=name).outputs["out"]
        except Exception as e:  # noqa: BLE001 - record and go on
            results["sweeps"].append({"name": name, "error": str(e)})
            continue
        packed = zlib.compress(got, 6)
        if spent + len(packed) > budget_bytes:
            results["sweeps"].append({"name": name, "skipped": f"output budget ({len(packed)} bytes)"})
            continue
        if archive is None or archive_size + len(packed) > file_bytes:
            if archive is not None:
                archive.close()
            archive_index += 1
            archive = zipfile.ZipFile(out / f"mufu_{archive_index}.zip", "w", zipfile.ZIP_STORED)
            archive_size = 0
        archive.writestr(f"{name}.z", packed)
        archive_size += len(packed)
        spent += len(packed)
        results["sweeps"].append({"name": name, "fn": fn, "first": first, "step": step, "count": count,
                                  "archive": f"mufu_{archive_index}.zip", "bytes": len(packed),
                                  "sha256": hashlib.sha256(got).hexdigest()})
        print(f"  {name}: {count} results, {len(packed)} bytes ({time.time() - t0:.1f} s)", flush=True)
    if archive is not None:
        archive.close()
    results["elapsed_s"] = round(time.time() - t0, 1)
    (out / "mufu_capture.json").write_text(json.dumps(results, indent=1))
    print(f"mufu capture: {sum('archive' in s for s in results['sweeps'])} sweeps, {spent} bytes, "
          f"{results['elapsed_s']} s")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.gpu_mufu_capture", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--arch", default="sm_90")
    p.add_argument("--out", type=Path, default=Path(".mufu_bundle"))
    p.add_argument("--second", action="store_true", help="the validation sweeps (second capture)")
    r = sub.add_parser("run")
    r.add_argument("--bundle", type=Path, default=Path(".mufu_bundle"))
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--device", choices=("cuda", "emulator"), default="cuda")
    r.add_argument("--budget-mb", type=float, default=56.0, help="compressed output, all files")
    r.add_argument("--file-mb", type=float, default=15.0, help="largest output file")
    r.add_argument("--scale", type=int, default=1, help="divide every sweep's count (tests)")
    r.add_argument("--select", help="regular expression on sweep names")
    a = ap.parse_args(argv)
    if a.cmd == "prepare":
        prepare(a.out, a.arch, a.second)
        return 0
    return run(a.bundle, a.out, a.device, int(a.budget_mb * 2**20), int(a.file_mb * 2**20), a.scale, a.select)


if __name__ == "__main__":
    sys.exit(main())
