"""The m8 tensor-core shapes' results on sm_8x: ptxas reads them 13 cycles after issue
(`mma_single_pass.fixed_m8` in sched/latency/ampere.json; a store 12, `to_memory_m8`; fuzz seed 8900034's
BMMA.88128.XOR.POPC -> LOP3 at 13 failed the checker that asked 16, and
tools/mma_read_sites.py found 13 for IMMA.8816/8832 and BMMA.88128 on seeds it was not
tuned on). The checker finds no hazard in ptxas's cubins of these, and the table says 13
for m8 and keeps 16 for m16."""
import numpy as np
import pytest

from codegen_harness import inputs, kernel

BODIES = {
    "bmma.m8n8k128.xor": "mov.b32 %x4, 0; mov.b32 %x5, 0; "
                         "mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.xor.popc {%x0, %x1}, {%a0}, {%a1}, {%x4, %x5}; "
                         "xor.b32 %x0, %x0, 0x1fff; add.u32 %o, %x0, %x1;",
    "imma.m8n8k16.s8": "mov.b32 %x4, 0; mov.b32 %x5, 0; "
                       "mma.sync.aligned.m8n8k16.row.col.s32.s8.u8.s32 {%x0, %x1}, {%a0}, {%a1}, {%x4, %x5}; "
                       "xor.b32 %x0, %x0, 0x1fff; add.u32 %o, %x0, %x1;",
    # the result stored as it is: ptxas's STG reads it 12 cycles after the IMMA.8832
    # (`mma_single_pass.to_memory_m8`; the fuzzer's sub-byte wmma, seeds 302945-302959)
    "imma.m8n8k32.s4.stored": "mov.b32 %x4, 0; mov.b32 %x5, 0; "
                              "mma.sync.aligned.m8n8k32.row.col.s32.s4.s4.s32 {%x0, %x1}, {%a0}, {%a1}, {%x4, %x5}; "
                              "mov.b32 %o, %x1;",
}


@pytest.mark.parametrize("name", list(BODIES))
def test_ptxas_reads_m8_mma_results_without_a_checker_hazard(name):
    from ptx2sass import oracle
    from ptx2sass.emu.launch import run
    res = oracle.ptxas(kernel(BODIES[name], 32, 2, 32, version="8.5"))
    assert res.ok, res.stderr
    out = np.zeros(64, np.uint32)
    result = run(res.output, "k", 1, 64, [out, inputs(32, 2)])
    assert result.hazards == [], [str(h) for h in result.hazards]


def test_table_m8_and_m16_single_pass_latencies():
    from ptx2sass.sched.latency import model
    m = model("ampere")
    assert m.fixed_latency("BMMA", ("88128", "XOR", "POPC")) == 13
    assert m.fixed_latency("IMMA", ("8816", "S8", "U8")) == 13
    assert m.fixed_latency("IMMA", ("16816", "S8", "S8")) == 16
    assert m.fixed_latency("HMMA", ("16816", "F32")) == 24
    assert m.read_latency("IMMA", ("8832", "S4", "S4"), "R", "STG") == 12
    assert m.read_latency("IMMA", ("16816", "S8", "S8"), "R", "STG") == 15


# 2:4 sparse A (mma.sp): the unit multiplies k/2 stored elements, so HMMA.SP.16816 (f16,
# k 16) is a single pass as HMMA.1688 is, and HMMA.SP.16832 two as HMMA.16816. Fuzz seeds
# 300780-300795 (--features int32,mma,forms,warp, tuned on): 12 of 16 programs were
# emu_fail with the sparse shapes taken at full k (HMMA results read by PRMT/IMAD/SGXT
# sooner than 24, sources overwritten sooner than 7); all 16 pass with k/2, and 20 of 20
# held-out programs (seeds 301780-301799, an mma.sp in each) pass.
SPARSE = ("mov.b32 %x4, 0x4e4e4e4e; mov.b32 %x5, 0; mov.b32 %x6, 0; mov.b32 %x7, 0; "
          "mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%x0, %x1, %x2, %x3}, {%a0, %a1}, {%a2, %a3}, "
          "{%x4, %x5, %x6, %x7}, %x4, 0x0; "
          "xor.b32 %x0, %x0, 0x1fff; add.u32 %o, %x0, %x3;")


def test_ptxas_reads_sparse_mma_results_without_a_checker_hazard():
    from ptx2sass import oracle
    from ptx2sass.emu.launch import run
    res = oracle.ptxas(kernel(SPARSE, 32, 4, 32, version="8.5"))
    assert res.ok, res.stderr
    out = np.zeros(64, np.uint32)
    result = run(res.output, "k", 1, 64, [out, inputs(32, 4)])
    assert result.hazards == [], [str(h) for h in result.hazards]


def test_table_sparse_shapes_by_stored_k():
    from ptx2sass.sched.latency import model
    m = model("ampere")
    assert m.mma_single_pass("HMMA", ("SP", "16816", "F32"))
    assert not m.mma_single_pass("HMMA", ("SP", "16832", "F32"))
    assert m.mma_single_pass("IMMA", ("SP", "16832", "S8", "S8"))
    assert not m.mma_single_pass("IMMA", ("SP", "16864", "S8", "S8"))
    assert m.fixed_latency("HMMA", ("SP", "16816", "F32")) == 16
