"""b1 `mma.sync` (m8n8k128, m16n8k128, m16n8k256; .xor/.and .popc) on sm_100/sm_120 with
fragments that are the same in every lane (kernel parameters), which ptxas 13.5 keeps in
uniform registers; tests/test_codegen_mma_tiles.py has per-lane random ones. D must equal
NumPy's C + popc(A op B) from the PTX ISA's fragment layouts, for ptxas's cubin and ours in
the emulator. Under register pressure ptxas also R2URs MOVM.U4TO8.M832's result of a uniform
fragment (fuzz 28000077, tests/fuzz_regressions), which these small kernels do not provoke:
the last test checks that MOVM.U4TO8 itself keeps a uniform input uniform, lane by lane."""
import zlib

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.emu.ops_mma import _movm_u4_to_u8
from ptx2sass.encoder.model import Reg

SHAPES = {"m8n8k128": (8, 128, 1, 1, 2), "m16n8k128": (16, 128, 2, 1, 4), "m16n8k256": (16, 256, 4, 2, 4)}


def _kernel(arch, shape, op, uniform):
    """A from parameters p0.. where "a" in `uniform` (else the per-lane words at
    in[lane*12+i]), B (p4, p5) and C (p8..) likewise; D to out[lane*4+i]."""
    m, k, n_a, n_b, n_c = SHAPES[shape]
    params = ", ".join(f".param .b32 p{i}" for i in range(12))
    loads = []
    for i in range(n_a):
        loads.append(f"ld.param.b32 %r{i}, [p{i}];" if "a" in uniform else f"ld.global.b32 %r{i}, [%rd4+{4 * i}];")
    for i in range(n_b):
        loads.append(f"ld.param.b32 %r{4 + i}, [p{4 + i}];" if "b" in uniform
                     else f"ld.global.b32 %r{4 + i}, [%rd4+{16 + 4 * i}];")
    for i in range(n_c):
        loads.append(f"ld.param.b32 %r{8 + i}, [p{8 + i}];" if "c" in uniform
                     else f"ld.global.b32 %r{8 + i}, [%rd4+{32 + 4 * i}];")
    r = lambda first, n: "{" + ", ".join(f"%r{first + j}" for j in range(n)) + "}"
    stores = " ".join(f"st.global.b32 [%rd5+{4 * i}], %r{20 + i};" for i in range(n_c))
    nl = "\n    "
    return f"""
.version 8.7
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in, {params})
{{
    .reg .b64 %rd<8>; .reg .b32 %r<40>;
    ld.param.u64 %rd2, [out]; ld.param.u64 %rd1, [in];
    mov.u32 %r30, %laneid; mul.wide.u32 %rd3, %r30, 48; add.s64 %rd4, %rd1, %rd3;
    mul.wide.u32 %rd3, %r30, 16; add.s64 %rd5, %rd2, %rd3;
    {nl.join(loads)}
    mma.sync.aligned.{shape}.row.col.s32.b1.b1.s32.{op}.popc {r(20, n_c)}, {r(0, n_a)}, {r(4, n_b)}, {r(8, n_c)};
    {stores}
    ret;
}}
"""


def _want(shape, op, words):
    """C + popc(A op B) from the PTX ISA's b1 fragments: A register i of lane (g, t) holds
    row g + 8 (i % 2) (m16) bits (i // 2) 128 + 32 t.., B register i column g bits 128 i + 32 t..,
    C/D register i row g + 8 (i // 2), column 2t + i % 2."""
    m, k, n_a, n_b, n_c = SHAPES[shape]
    bits = lambda w: (int(w) >> np.arange(32)) & 1
    A = np.zeros((m, k), np.int64); B = np.zeros((k, 8), np.int64); C = np.zeros((m, 8), np.int64)
    for lane in range(32):
        g, t = divmod(lane, 4)
        for i in range(n_a):
            row, kk = (g + 8 * (i % 2), i // 2) if m == 16 else (g, i)
            A[row, 128 * kk + 32 * t + np.arange(32)] = bits(words[lane, i])
        for i in range(n_b):
            B[128 * i + 32 * t + np.arange(32), g] = bits(words[lane, 4 + i])
        for i in range(n_c):
            C[g + 8 * (i // 2), 2 * t + i % 2] = np.int32(words[lane, 8 + i].view(np.int32))
    both = A @ B
    prod = both if op == "and" else A.sum(1)[:, None] + B.sum(0)[None, :] - 2 * both
    want = (prod + C + 2 ** 31) % 2 ** 32 - 2 ** 31
    out = np.zeros((32, 4), np.int64)
    for lane in range(32):
        g, t = divmod(lane, 4)
        for i in range(n_c):
            out[lane, i] = want[g + 8 * (i // 2), 2 * t + i % 2]
    return out


@pytest.mark.parametrize("uniform", ["abc", "ab", "a", "b"])
@pytest.mark.parametrize("op", ["xor", "and"])
@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("arch", ["sm_100", "sm_120"])
def test_b1_mma_uniform_fragments(arch, shape, op, uniform):
    rng = np.random.default_rng(zlib.crc32(f"{shape}{op}{uniform}".encode()))
    p = rng.integers(0, 2 ** 32, 12, dtype=np.uint64).astype(np.uint32)
    data = rng.integers(0, 2 ** 32, 32 * 12, dtype=np.uint64).astype(np.uint32)
    words = data.reshape(32, 12)
    if "a" in uniform:
        words[:, 0:4] = p[0:4]
    if "b" in uniform:
        words[:, 4:6] = p[4:6]
    if "c" in uniform:
        words[:, 8:12] = p[8:12]
    ptx = _kernel(arch, shape, op, uniform)
    want = _want(shape, op, words)
    n_c = SHAPES[shape][4]
    outs = []
    for cubin, check in ((oracle.ptxas(ptx, arch=arch).output, False), (codegen.compile_ptx(ptx, arch, "k.ptx"), True)):
        out = np.zeros(32 * 4, dtype=np.uint32)
        res = run(cubin, "k", (1, 1, 1), (32, 1, 1), [out, data.copy(), *[np.uint32(v) for v in p]],
                  hazard_check=check)
        assert not (check and res.hazards), res.hazards
        outs.append(out.reshape(32, 4)[:, :n_c].view(np.int32))
    theirs, ours = outs
    assert (theirs == want[:, :n_c]).all(), "ptxas's cubin in the emulator"
    assert (ours == want[:, :n_c]).all(), "ours"


class _Lanes:
    """Just enough of the emulator's lane view for one MOVM: registers as rows of 32 lanes."""
    def __init__(self, rows):
        self.rows = dict(rows)

    def r(self, reg):
        return self.rows[reg.index]

    def wn(self, d, words, mask):
        for i, v in enumerate(words):
            self.rows[d.index + i] = np.asarray(v, dtype=np.uint32)


class _Step:
    def __init__(self, d, a):
        self.ins = type("I", (), {"operands": [Reg("R", d), Reg("R", a)], "mnemonic": "MOVM"})()


def test_movm_u4to8_widens_each_lane_alone():
    """Lane by lane: nibbles 0..3 of a zero-extended to bytes 0..3 of d, nibbles 4..7 to d+1
    (a uniform word stays uniform: ptxas R2URs the result of a uniform input)."""
    words = np.array([0x1E27 * (l + 1) * 0x9E3779B1 % 2 ** 32 for l in range(32)], dtype=np.uint32)
    words[5] = 0xFEDCBA98
    lanes = _Lanes({10: words})
    _movm_u4_to_u8(lanes, _Step(2, 10), np.ones(32, bool))
    for lane, w in enumerate(words.tolist()):
        nib = [(w >> (4 * n)) & 0xF for n in range(8)]
        assert int(lanes.rows[2][lane]) == sum(nib[j] << (8 * j) for j in range(4))
        assert int(lanes.rows[3][lane]) == sum(nib[4 + j] << (8 * j) for j in range(4))
    assert (int(lanes.rows[2][5]), int(lanes.rows[3][5])) == (0x0B0A0908, 0x0F0E0D0C)
    uniform = _Lanes({10: np.full(32, 0x88884444, dtype=np.uint32)})
    _movm_u4_to_u8(uniform, _Step(2, 10), np.ones(32, bool))
    assert (uniform.rows[2] == 0x04040404).all() and (uniform.rows[3] == 0x08080808).all()
