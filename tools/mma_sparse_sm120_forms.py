"""Every sparse `mma.sp::ordered_metadata ... .kind::*` form of the inventory on sm_120a/121a:
ours against ptxas 13.5.37 (branch sparse120). Per form, one kernel that loads the fragments
per lane, runs the mma and stores D; compared: the MMA line and any selector UMOV (register
numbers and reuse flags aside), nv.info's SPARSE_MMA_MASK, and for kind::f8f6f4 the stored D
of both cubins in the emulator on the same random fragments (valid ordered metadata).

    py -m tools.mma_sparse_sm120_forms [--targets sm_120a sm_121a] [--every N]
    py -m tools.mma_sparse_sm120_forms --refusals [--held-out] [--every N]

`--refusals`: a grid of sparse kind spellings on sm_120a, right and wrong ({.sp::ordered_metadata,
.sp} x kind x `.block_scale` or not x size {none, 2X, 4X} x shape {k32, k64, k128} x A.B
{e4m3.e2m1, e2m1.e2m1} x {f32, f16} x scale type {none, ue8m0, ue4m3} x sparsity selector
{0, 1}; 3,456): ptxas's error lines in order, or the same MMA line, = ours (tuned on).
`--held-out` (written after the rules): sizes {none, 1X}, A.B e3m2.e5m2, selector {0, 3},
`.sp::ordered_metadata` only, on sm_121a, sm_120 and sm_100a.
"""
from __future__ import annotations

import argparse
import re

import numpy as np

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.frontend import inventory

KERNEL = """.version 9.2
.target {target}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
    .reg .b64 %rd<8>; .reg .b32 %r<24>; .reg .f32 %f<8>;
    ld.param.u64 %rd2, [out]; ld.param.u64 %rd1, [in];
    mov.u32 %r20, %laneid; mul.wide.u32 %rd3, %r20, 64; add.s64 %rd4, %rd1, %rd3;
    mul.wide.u32 %rd3, %r20, 16; add.s64 %rd5, %rd2, %rd3;
    ld.global.v4.b32 {{%r0, %r1, %r2, %r3}}, [%rd4];
    ld.global.v4.b32 {{%r4, %r5, %r6, %r7}}, [%rd4+16];
    ld.global.v4.f32 {{%f0, %f1, %f2, %f3}}, [%rd4+32];
    ld.global.v2.b32 {{%r8, %r9}}, [%rd4+32];
    ld.global.v2.b32 {{%r10, %r11}}, [%rd4+48];
    ld.global.b32 %r12, [%rd4+56];
    {mma}
    {store}
    ret;
}}
"""
# the ordered position pairs of a 2:4 chunk, as metadata nibbles
NIBBLES = [lo | hi << 2 for lo, hi in ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))]


def forms():
    """(instruction text, kind::f8f6f4 or not) of each sparse kind form of the inventory."""
    for f in inventory.forms():
        if f.opcode != "mma" or "kind::" not in f.name or not f.name.startswith("mma.sp"):
            continue
        name, _, operands = f.name.partition(" ")
        f16 = ".f16." in name
        d, c = ("{%r14, %r15}", "{%r8, %r9}") if f16 else ("{%f4, %f5, %f6, %f7}", "{%f0, %f1, %f2, %f3}")
        ops = f"{d}, {{%r0, %r1, %r2, %r3}}, {{%r4, %r5, %r6, %r7}}, {c}, %r12, 0"
        if "block_scale" in name:
            sels = re.findall(r"x:(\{\d+,\d+\})", operands)
            ops += f", %r10, {sels[0]}, %r11, {sels[1]}"
        store = f"st.global.v2.b32 [%rd5], {d};" if f16 else f"st.global.v4.f32 [%rd5], {d};"
        yield f"{name} {ops};", store, "block_scale" not in name


def lines(cubin: bytes) -> list:
    text = oracle.nvdisasm(cubin, ("-c",))
    out = [" ".join(line.split("*/", 1)[1].split(";")[0].split()) for line in text.splitlines()
           if "MMA" in line or re.search(r"UMOV UR\d+, 0x", line)]
    mask = re.search(r"\.byte\s+0x03, 0x50\s*\n.*?\.short\s+(0x[0-9a-f]+)", oracle.nvdisasm(cubin))
    return [re.sub(r"\bU?R\d+", "R", line.replace(".reuse", "")) for line in out] + \
        [mask.group(1) if mask else None]


def data(rng) -> np.ndarray:
    words = rng.integers(0, 1 << 32, (32, 16), dtype=np.uint64).astype(np.uint32)
    words[:, 8:12] = rng.normal(0, 4, (32, 4)).astype(np.float32).view(np.uint32)
    words[:, 14] = sum(np.uint32(NIBBLES[k]) << np.uint32(4 * i)
                       for i, k in enumerate(rng.integers(0, 6, 8)))
    return words.reshape(-1)


def refusal_forms(held_out: bool = False):
    d4 = "{d0,d1,d2,d3}, {a0,a1,a2,a3}, {b0,b1,b2,b3}, {c0,c1,c2,c3}"
    d2 = "{h0,h1}, {a0,a1,a2,a3}, {b0,b1,b2,b3}, {e0,e1}"
    sps = (".sp::ordered_metadata",) if held_out else (".sp::ordered_metadata", ".sp")
    vecs = ("", ".scale_vec::1X") if held_out else ("", ".scale_vec::2X", ".scale_vec::4X")
    types = ("e3m2.e5m2",) if held_out else ("e4m3.e2m1", "e2m1.e2m1")
    sels = ("0", "3") if held_out else ("0", "1")
    for sp in sps:
        for kind in (".kind::f8f6f4", ".kind::mxf8f6f4", ".kind::mxf4", ".kind::mxf4nvf4"):
            for block in ("", ".block_scale"):
                for vec in vecs:
                    for shape in ("m16n8k32", "m16n8k64", "m16n8k128"):
                        for ab in types:
                            for acc in ("f32", "f16"):
                                for stype in ("", ".ue8m0", ".ue4m3"):
                                    for sel in sels:
                                        tail = f", m, {sel}" + (", s0, {0, 1}, s1, {2, 0}"
                                                                if block or stype else "")
                                        yield (f"mma{sp}.sync.aligned.{shape}.row.col{kind}{block}{vec}"
                                               f".{acc}.{ab}.{acc}{stype} {d4 if acc == 'f32' else d2}{tail};")


def refusals(held_out: bool, every: int) -> int:
    from tools import mma_sm120_sweep as sweep
    body = sweep.BODY.replace(".reg .b32 a<4>, b<2>, s<2>;", ".reg .b32 a<4>, b<4>, s<2>, m;")
    targets = ("sm_121a", "sm_120", "sm_100a") if held_out else ("sm_120a",)
    same = total = 0
    for target in targets:
        for mma in list(refusal_forms(held_out))[::every]:
            ok, theirs, ours = sweep.compare(body.format(mma=mma, target=target, version="9.2"), target)
            same += ok
            total += 1
            if not ok:
                print(f"differ {target} {mma}\n  ptxas {theirs}\n  ours  {ours}")
    print(f"sparse kind spellings, ours = ptxas: {same}/{total}")
    return 0 if same == total else 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--targets", nargs="+", default=["sm_120a", "sm_121a"])
    ap.add_argument("--every", type=int, default=1)
    ap.add_argument("--refusals", action="store_true")
    ap.add_argument("--held-out", action="store_true")
    args = ap.parse_args(argv)
    if args.refusals:
        return refusals(args.held_out, args.every)
    rng = np.random.default_rng(120)
    same = values = total = valued = 0
    for target in args.targets:
        for mma, store, plain in list(forms())[::args.every]:
            ptx = KERNEL.format(target=target, mma=mma, store=store)
            theirs = oracle.ptxas(ptx, arch=target)
            if not theirs.ok:
                print(f"ptxas refuses {target} {mma}")
                continue
            ours = codegen.compile_ptx(ptx, target, "k.ptx")
            total += 1
            if lines(ours) == lines(theirs.output):
                same += 1
            else:
                print(f"differ {target} {mma}\n  ptxas {lines(theirs.output)}\n  ours  {lines(ours)}")
            if plain:
                valued += 1
                inputs = data(rng)
                outs = []
                for cubin in (ours, theirs.output):
                    out = np.zeros(128, dtype=np.uint32)
                    run(cubin, "k", (1, 1, 1), (32, 1, 1), [out, inputs.copy()])
                    outs.append(out)
                if np.array_equal(*outs):
                    values += 1
                else:
                    print(f"values differ {target} {mma}")
    print(f"SASS line, selector UMOV and SPARSE_MMA_MASK = ptxas's: {same}/{total}")
    print(f"kind::f8f6f4 D in the emulator, ours = ptxas's cubin: {values}/{valued}")
    return 0 if same == total and values == valued else 1


if __name__ == "__main__":
    raise SystemExit(main())
