"""emu/specialise.py's F2FP.F16/BF16.F32.PACK_AB form against ops_float.op_f2fp on the FP32
values where a narrowing to half precision turns: exact ties (even and odd last kept bit),
one below and above a tie, the largest finite values and the rounding into infinity, the
smallest normals and subnormals of F16 and BF16, signed zeros, infinities, quiet and
signalling NaNs of both signs. Random register bits (tests/test_emu_specialise.py) almost
never land on a tie."""
import numpy as np
import pytest

from tools import emu_testing as testing
from ptx2sass.emu.launch import Launch
from ptx2sass.emu.loader import load_program
from ptx2sass.emu.machine import Group, Machine
from ptx2sass.emu.program import specialise_step


def _edge_bits() -> np.ndarray:
    f = np.float32
    values = [0.0, -0.0, 1.0, -1.0, 65504.0, 65519.0, 65520.0, -65520.0, 65536.0, 6.1035156e-05,
              5.9604645e-08, 2.9802322e-08, 2.9802326e-08, 8.940697e-08, 3.4028235e38, -3.4028235e38,
              1.1754944e-38, 1e-45, np.inf, -np.inf]
    bits = [int(np.array(v, f).view(np.uint32)) for v in values]
    for hi in (0x3F80, 0x3F81, 0x7F7F, 0x0000, 0x0080, 0xC2FE, 0x477F, 0x4780):
        for lo in (0x7FFF, 0x8000, 0x8001, 0x0000, 0xFFFF):
            bits.append(hi << 16 | lo)
    for m in (0x1000, 0x0FFF, 0x1001, 0x3000, 0x2000):          # F16's 13 dropped bits: ties and near
        for e in (0x3F800000, 0x38800000, 0x33000000, 0x477FE000):
            bits.append(e | m)
    bits += [0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001, 0x7FFFFFFF, 0xFFFFFFFF, 0x7FBFFFFF]
    return np.array(bits, dtype=np.uint64).astype(np.uint32)


def _f2fp_steps():
    out = []
    for entry in testing.zluda_manifest():
        if entry["name"] not in ("cvt_rn_bf16x2_f32", "cvt_f16x2_f32"):
            continue
        cubin = testing.zluda_cubin(entry)
        program = load_program(cubin, entry["kernel"], testing.cubin_listing_decoder(cubin))
        launch = Launch(program, (2,), (40,), hazard_check=False)
        for off, step in launch.decoded.all().items():
            if step.ins.opcode == "F2FP":
                out.append((entry["name"], launch, off))
    return out


STEPS = _f2fp_steps() if testing.ZLUDA_DIR.joinpath("manifest.json").is_file() else []


def test_both_kinds_are_swept():
    mods = {launch.decoded.step(off).ins.modifiers[0] for _, launch, off in STEPS}
    assert mods == {"F16", "BF16"}


@pytest.mark.parametrize("case", STEPS, ids=lambda c: f"{c[0]}@{c[2]:x}")
def test_f2fp_form_matches_handler_on_edge_values(case):
    _, launch, off = case
    step = specialise_step(launch.decoded.step(off))
    assert step.run is not step.generic, "the form was not made"
    d_op, a_op, b_op = step.ins.operands
    edges = _edge_bits()
    n = len(edges)
    # every edge value as a and as b, against every other one in turn
    for shift in range(0, n, 7):
        with np.errstate(all="ignore"):
            results = []
            for fn in (step.generic, step.run):
                m = Machine(launch, [(0, 0, 0), (1, 0, 0)])
                m.R[d_op.index] = 0x5A5A5A5A          # (d may be a source: set first)
                m.R[a_op.index, :n] = edges
                m.R[b_op.index, :n] = np.roll(edges, shift)
                idx = np.arange(n)
                g = Group(m, idx, np.unique(idx >> 5), off)
                fn(g, step, g.active, g.active)
                results.append(m.R[d_op.index].copy())
        want, got = results
        bad = np.flatnonzero(want != got)
        assert not len(bad), (f"a=0x{int(edges[bad[0]]):08x} b=0x{int(np.roll(edges, shift)[bad[0]]):08x}: "
                              f"form 0x{int(got[bad[0]]):08x}, handler 0x{int(want[bad[0]]):08x}")
