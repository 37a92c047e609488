"""sm_110 (Thor)'s latency table against ptxas 13.5.37's own sm_110 code (issue 18).

blackwell_sm110.json is sm_100's table but for IMMA (fixed-latency on sm_110). The audit
(`python -m tools.latency_audit --arch sm_110`) of ptxas's sm_110 cubins must find no hazard
(a hazard in ptxas's code is the table's error) and the distances ptxas relies on must not be
below the table's. The pairs below were suspects of the cuda corpus's audit (ours below
ptxas's minimum there: IMAD.WIDE's low half -> ALU 3 vs 5, IMAD -> IMAD.WIDE addend 2 vs 4,
IMAD.WIDE -> IMAD 4 vs 6, IADD3 -> F2I 4 vs 6); the other corpora show ptxas's sm_110 code
relying on exactly the table's value, as its sm_100 code does, so the values stay. Expected
values: ptxas's minimum distances (recorded from its cubins, see docs/STATUS.md issue 18,
branch leftovers24)."""
import pytest

NAMES = {"triton": {"layer_norm", "flash_attn_fwd", "flash_attn_causal", "int64_rows", "softmax_rows", "matmul_masked"},
         "llvm": {"divide", "safe_checks", "recursion"},
         "zluda": {"rem", "mul_hi", "redux_sync_op_s32"}}

# (producer, result file, register of the result, reader class, reader): ptxas's least distance
PTXAS_SM110 = {
    ("IMAD.WIDE", "R", 0, "alu", "IADD3"): 3,       # triton layer_norm, llvm divide
    ("IMAD.WIDE", "R", 0, "alu", "ISETP"): 3,       # triton flash_attn_causal (kernel flash_attn_fwd)
    ("IMAD.WIDE", "R", 0, "alu", "LEA"): 3,         # triton flash_attn_fwd
    ("IMAD", "R", 0, "addend", "IMAD"): 2,          # triton int64_rows
    ("IMAD.WIDE", "R", 0, "alu", "IMAD"): 4,        # triton softmax_rows, llvm divide
    ("IADD3", "R", 0, "alu", "F2I"): 4,             # zluda rem
}


@pytest.fixture(scope="module")
def sm110_audit():
    from tools import latency_audit as la
    a = la.run_audit(tuple(NAMES), names=NAMES, arch="sm_110")
    if a.kernels < 12:
        pytest.skip(f"only {a.kernels} launches audited (corpus or oracle missing)")
    return a


def test_sm110_table_passes_ptxas_s_cubins(sm110_audit):
    from tools import latency_audit as la
    assert not sm110_audit.skipped, sm110_audit.skipped[:3]
    assert not sm110_audit.hazards, sm110_audit.hazards[:5]
    fixed_sb, var_nosb = la.scoreboard_findings(sm110_audit)
    assert not fixed_sb, fixed_sb
    assert not [r for r in var_nosb if r[3]], var_nosb


@pytest.mark.parametrize("key", sorted(PTXAS_SM110), ids=lambda k: f"{k[0]}-{k[4]}-{k[3]}")
def test_sm110_table_is_ptxas_s_least_distance(sm110_audit, key):
    """ptxas's sm_110 code reads the result exactly the table's distance after issue: the
    table is neither stricter (cycles lost) nor looser than ptxas."""
    from tools import latency_audit as la
    assert key in sm110_audit.raw, sorted(k for k in sm110_audit.raw if k[0] == key[0])[:10]
    assert sm110_audit.raw[key].min == PTXAS_SM110[key]
    assert la.table_latency(key, sm110_audit.lat) == PTXAS_SM110[key]
