"""Zeroing an aligned register pair: ptxas 13.5 writes one `CS2R Rd, SRZ` for both halves
(sm_75 to sm_120) where two moves were ours (Triton's accumulators, re-zeroed each loop
iteration in flash_attn_causal). Expectations: ptxas's cubin (its CS2R count, its
instruction count) and its outputs in the emulator, hazard checker on."""
import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.opt import runtime_unroll
from ptx2sass.tinygrad import sass_listing
from test_codegen_quality import _instructions

# four f32 accumulators of a v4 load, stored as a v4: the allocator puts them in a quad,
# and their zeros before the loop are two aligned pairs
F32 = """.version 8.0
.target ARCH
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in, .param .u32 n)
{
  .reg .b64 %rd<8>; .reg .b32 %r<8>; .reg .f32 %f<16>; .reg .pred %p<3>;
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %tid.x;
  mul.wide.u32 %rd3, %r2, 16;
  add.s64 %rd1, %rd1, %rd3;
  add.s64 %rd2, %rd2, %rd3;
  mov.f32 %f1, 0f00000000;
  mov.f32 %f2, 0f00000000;
  mov.f32 %f3, 0f00000000;
  mov.f32 %f4, 0f00000000;
  mov.u32 %r3, 0;
LOOP:
  ld.global.v4.f32 {%f5, %f6, %f7, %f8}, [%rd1];
  add.f32 %f1, %f1, %f5;
  add.f32 %f2, %f2, %f6;
  add.f32 %f3, %f3, %f7;
  add.f32 %f4, %f4, %f8;
  add.s64 %rd1, %rd1, 512;
  add.s32 %r3, %r3, 1;
  setp.lt.s32 %p1, %r3, %r1;
  @%p1 bra LOOP;
  st.global.v4.f32 [%rd2], {%f1, %f2, %f3, %f4};
  ret;
}
"""
TRIPS = 5


def _zero_pairs(listing: list[str]) -> int:
    return sum(o.startswith("CS2R") and o.endswith("SRZ") for o in listing)


@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_89", "sm_90"])
def test_accumulator_zeros_are_ptxas_s_cs2r_pairs(arch, monkeypatch):
    # the loop as a loop: ptxas also runs it 4 copies per exit test (opt/runtime_unroll.py);
    # copied, ours predicates the remainders as ptxas does (test_opt_runtime_unroll.py), but
    # moves the four accumulators into the STG.128 quad at the end (ptxas accumulates in the
    # quad): 70 instructions on sm_80 (ptxas 68), 72 on sm_90 (69)
    monkeypatch.setattr(runtime_unroll, "ENABLED", False)
    ptx = F32.replace("ARCH", arch)
    theirs = oracle.ptxas(ptx, arch=arch).output
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")
    mine, ref = _instructions(sass_listing(ours)), _instructions(sass_listing(theirs))
    assert _zero_pairs(ref) == 2
    assert _zero_pairs(mine) == _zero_pairs(ref), mine
    assert len(mine) <= len(ref), (mine, ref)
    data = np.random.default_rng(11).standard_normal(128 * 4 * TRIPS).astype(np.float32)
    outs = []
    for cubin in (ours, theirs):
        out = np.full(128, np.nan, dtype=np.float32)
        res = run(cubin, "k", (1, 1, 1), (32, 1, 1), [out, data.copy(), np.int32(TRIPS)],
                  hazard_check=True)
        if cubin is ours:
            assert not res.hazards, [str(h) for h in res.hazards[:3]]
        outs.append(out)
    assert outs[0].tobytes() == outs[1].tobytes()
    assert not np.isnan(outs[0]).any()


def _zero(r: int, imad: bool = False):
    from ptx2sass.encoder.model import Instruction, Reg
    from ptx2sass.sched.control import Slot
    rz = Reg("R", 255)
    ins = (Instruction("IMAD", ("MOV", "U32"), (Reg("R", r), rz, rz, rz)) if imad
           else Instruction("MOV", (), (Reg("R", r), rz)))
    return Slot(ins, [], [("R", r)])


def _read(r: int, into: int):
    from ptx2sass.encoder.model import Instruction, Reg
    from ptx2sass.sched.control import Slot
    return Slot(Instruction("IADD3", (), (Reg("R", into), Reg("R", r), Reg("R", r), Reg("R", 255))),
                [("R", r)], [("R", into)])


def test_zeros_merge_only_where_neither_read_between_moves():
    """One CS2R writes both halves at one place: R5's zero may move up past readers of R4,
    R4's down past readers of R5; with both halves read between, both moves stay."""
    from ptx2sass.sched.zero_pairs import merge_zero_pairs
    ops = lambda slots: [s.ins.opcode for s in slots]     # noqa: E731
    assert ops(merge_zero_pairs([_zero(4), _read(4, 8), _read(5, 9), _zero(5, imad=True)])) == \
        ["MOV", "IADD3", "IADD3", "IMAD"]
    assert ops(merge_zero_pairs([_zero(4), _read(4, 8), _zero(5)])) == ["CS2R", "IADD3"]
    assert ops(merge_zero_pairs([_zero(4), _read(5, 8), _zero(5)])) == ["IADD3", "CS2R"]
    assert ops(merge_zero_pairs([_zero(5), _zero(6)])) == ["MOV", "MOV"]    # no aligned pair
    assert ops(merge_zero_pairs([_zero(4), _zero(5)], enabled=False)) == ["MOV", "MOV"]
