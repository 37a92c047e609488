"""cvt between f16 and bf16 (sm_90+): one F2F.F16.BF16 / F2F.BF16.F16 with the rounding as
ptxas writes it (was 'Illegal rounding modifier' for .rn/.rz/.rm/.rp, and an internal error
without one); ptxas's rules for the rounding modifier and its target message on sm_8x."""
import numpy as np
import pytest

import ptx2sass
from ptx2sass import oracle
from ptx2sass.emu.launch import run
from ptx2sass.emu.loader import load_program

ROUNDINGS = ["", ".rn", ".rz", ".rm", ".rp"]
PAIRS = ["f16.bf16", "bf16.f16"]
THREADS = 64


def _kernel(arch="sm_90"):
    body, k = [], 0
    for r in ROUNDINGS:
        for t in PAIRS:
            body.append(f"cvt{r}.{t} %h{k + 2}, %h1;\nst.global.u16 [%rd3+{2 * k}], %h{k + 2};")
            k += 1
    return (f".version 7.8\n.target {arch}\n.address_size 64\n"
            ".visible .entry k(.param .u64 pout, .param .u64 pin)\n{\n"
            ".reg .b16 %h<16>; .reg .b64 %rd<6>; .reg .b32 %r<2>;\n"
            "ld.param.u64 %rd1, [pout]; ld.param.u64 %rd2, [pin];\n"
            "cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2;\n"
            "mov.u32 %r1, %tid.x; mul.wide.u32 %rd4, %r1, 2; add.s64 %rd2, %rd2, %rd4;\n"
            "mul.wide.u32 %rd4, %r1, 20; add.s64 %rd3, %rd1, %rd4;\n"
            "ld.global.u16 %h1, [%rd2];\n" + "\n".join(body) + "\nret;\n}\n")


def test_f16_bf16_converts_equal_ptxas():
    ptx = _kernel()
    theirs = oracle.ptxas(ptx, "sm_90")
    assert theirs.ok, theirs.stderr
    ours = ptx2sass.compile(ptx, "sm_90", "k.ptx")
    edges = [0x0000, 0x8000, 0x3C00, 0x7BFF, 0x0001, 0x03FF, 0x3F80, 0x7F7F, 0x0080, 0x4780,
             0x477F, 0xC77F, 0x3555, 0x0100, 0xB7FF]       # f16 and bf16 reading alike
    rng = np.random.default_rng(5)
    inputs = np.array(edges + [int(x) & 0x7BFF for x in rng.integers(0, 1 << 16, THREADS - len(edges))],
                      np.uint16)
    outs = []
    for cubin, hazards in ((theirs.output, False), (ours, True)):
        out = np.zeros(THREADS * 10, np.uint16)
        res = run(cubin, "k", (1, 1, 1), (THREADS, 1, 1), [out, inputs.copy()], hazard_check=hazards)
        assert not (hazards and res.hazards)
        outs.append(out)
    assert (outs[0] == outs[1]).all()
    f2f = sorted(" ".join((i.opcode,) + tuple(i.modifiers)) for _, i in load_program(ours).instructions
                 if i.opcode == "F2F")
    want = sorted(" ".join((i.opcode,) + tuple(i.modifiers))
                  for _, i in load_program(theirs.output).instructions if i.opcode == "F2F")
    assert set(f2f) == set(want)          # ptxas shares the no-rounding and .rn converts


@pytest.mark.parametrize("arch,text,message", [
    ("sm_89", "cvt.rn.f16.bf16 %h1, %h2;", "Feature 'cvt with .f16.bf16' requires .target sm_90 or higher"),
    ("sm_89", "cvt.f64.bf16 %rd1, %h2;", "Feature 'cvt with .f64.bf16' requires .target sm_90 or higher"),
    ("sm_89", "cvt.rn.bf16.bf16 %h1, %h2;", "Feature 'cvt with .bf16.bf16' requires .target sm_90 or higher"),
    ("sm_90", "cvt.rni.f16.bf16 %h1, %h2;", "Illegal rounding modifier for instruction 'cvt'"),
    ("sm_90", "cvt.rn.sat.bf16.f16 %h1, %h2;", "Illegal modifier '.sat' for instruction 'cvt'"),
    ("sm_90", "cvt.rna.f16.f32 %h1, %r2;", "Illegal rounding modifier for instruction 'cvt'"),
    ("sm_90", "cvt.rs.f32.f64 %r1, %rd2;", "Illegal modifier '.rs' for instruction 'cvt' with type '.f32.f64'"),
    ("sm_89", "cvt.rp.f32.bf16 %r1, %h2;", None),
    ("sm_90", "cvt.rz.f64.bf16 %rd1, %h2;", None),
    ("sm_90", "cvt.rm.bf16.f16 %h1, %h2;", None),
])
def test_rounding_rules_as_ptxas(arch, text, message):
    ptx = (f".version 8.8\n.target {arch}\n.address_size 64\n.visible .entry k()\n{{\n"
           f".reg .b16 %h<4>; .reg .b32 %r<4>; .reg .b64 %rd<4>;\n{text}\nret;\n}}\n")
    theirs = oracle.ptxas(ptx, arch)
    if message is None:
        assert theirs.ok
        ptx2sass.compile(ptx, arch, "c.ptx")
        return
    assert message in theirs.stderr
    with pytest.raises(ptx2sass.CompileError, match=message.replace(".", r"\.").replace("(", r"\(")):
        ptx2sass.compile(ptx, arch, "c.ptx")


def test_integer_to_bf16_on_sm90_equals_ptxas():
    """cvt.{rn,rz,rm,rp}.bf16.{s32,u32,s64,u64,s16,u16} on sm_90: I2F.BF16[.<int>][.RZ|RM|RP]
    as ptxas (was refused 'cvt.bf16.s32 not supported yet'; found by the held-out seed-9
    sample). Ours and ptxas's cubin on edge and random integers."""
    ints = [("s32", "%r1", 4), ("u32", "%r1", 4), ("s64", "%rd2", 8), ("u64", "%rd2", 8),
            ("s16", "%h30", 2), ("u16", "%h30", 2)]
    body, k = [], 1
    for ty, reg, _ in ints:
        for r in ("rn", "rz", "rm", "rp"):
            body.append(f"cvt.{r}.bf16.{ty} %h{k}, {reg};\nst.global.u16 [%rd3+{2 * (k - 1)}], %h{k};")
            k += 1
    n = k - 1
    ptx = (".version 8.0\n.target sm_90\n.address_size 64\n"
           ".visible .entry k(.param .u64 pout, .param .u64 pin)\n{\n"
           ".reg .b16 %h<40>; .reg .b32 %r<4>; .reg .b64 %rd<6>;\n"
           "ld.param.u64 %rd1, [pout]; ld.param.u64 %rd4, [pin];\n"
           "cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd4, %rd4;\n"
           "mov.u32 %r3, %tid.x; mul.wide.u32 %rd5, %r3, 16; add.s64 %rd4, %rd4, %rd5;\n"
           f"mul.wide.u32 %rd5, %r3, {2 * n}; add.s64 %rd3, %rd1, %rd5;\n"
           "ld.global.u32 %r1, [%rd4]; ld.global.u64 %rd2, [%rd4+8]; ld.global.u16 %h30, [%rd4+4];\n"
           + "\n".join(body) + "\nret;\n}\n")
    theirs = oracle.ptxas(ptx, "sm_90")
    assert theirs.ok, theirs.stderr
    ours = ptx2sass.compile(ptx, "sm_90", "k.ptx")
    rng = np.random.default_rng(8)
    data = rng.integers(0, 1 << 63, (THREADS, 2), dtype=np.uint64)
    edges = [0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0x01010101, 0xFFFF8001, 257, 0x00FF8080]
    for t, e in enumerate(edges):
        data[t, 0] = e | (e << 32)
        data[t, 1] = (e << 32) | e
    outs = []
    for cubin, hazards in ((theirs.output, False), (ours, True)):
        out = np.zeros(THREADS * n, np.uint16)
        res = run(cubin, "k", (1, 1, 1), (THREADS, 1, 1), [out, data.ravel().copy()], hazard_check=hazards)
        assert not (hazards and res.hazards)
        outs.append(out)
    assert (outs[0] == outs[1]).all()
