"""sched.latency against ptxas, per family (sm_89: ampere.json, sm_90: hopper.json): on a
sample of ptxas's cubins for the arch run in the emulator, no value
of our latency table may be below the issue distance ptxas always leaves for the readers it
applies to (tools/latency_audit.py; `.venv/bin/python -m tools.latency_audit` runs the whole
corpora), nor above a distance ptxas relies on.

The sample: every ZLUDA kernel plus tinygrad kernels chosen for the table rows ZLUDA does not
exercise (uniform datapath, tensor cores, packed halves, FP64, 64-bit division). A LOW
finding needs 3 distinct padded static sites at ptxas's minimum (tools.latency_audit.findings)."""
import pytest

from tools import latency_audit as la

TINYGRAD = {
    "sum_odd_float32__r_37_91", "noopt_add_f32__E_4096",                 # uniform datapath
    "matmul_f16_batched_tc__r_2_32_2_2_2_4_4_2_2", "matmul_f16_tc_16__r_32_2_2_2_2",  # HMMA
    "gelu_float16__E_16_32_4", "cmplt_float16__E_2_32_4", "sin_float16_software__E_16_32_4",  # halves
    "max_axis1_float64__r_2_32_25_4",                                     # FP64 readers
    "idiv_uint64__E_125_2_4",                                             # IMAD.HI carry
    "cast_float32_to_uint8__E_125_2_4",                                   # F2IP
    "rmsnorm_f32__E_8_8_16_4",
    "idiv_int64__E_125_2_4",                                              # sm_90: IMAD.WIDE's late addend
}


@pytest.fixture(scope="module", params=["sm_89", "sm_90"])
def audit(request):
    a = la.run_audit(("zluda", "tinygrad"), names={"tinygrad": TINYGRAD}, arch=request.param)
    if a.kernels < 150:
        pytest.skip(f"only {a.kernels} launches audited (corpus or oracle missing)")
    return a


def _rows(rows):
    return [f"{k} ours {ours} ptxas {mn} ({len(st.sites)} sites, e.g. {st.example})"
            for k, ours, mn, st in rows]


def test_table_not_below_ptxas(audit):
    low, _ = la.findings(audit)
    assert not low, _rows(low)


def test_table_not_above_ptxas(audit):
    _, high = la.findings(audit)
    assert not high, _rows(high)
    assert not audit.hazards, audit.hazards[:5]


def test_sample_exercises_the_table(audit):
    """The sample reaches the rows it was chosen for (else the checks above prove little)."""
    groups = {(k[0].split(".")[0], k[1], la.reader_group(k, audit.lat)) for k in audit.raw}
    # sm_90: ptxas 13.5 never issues an HMMA that reads the result of a recent HMMA in any
    # corpus (18 tinygrad tensor-core kernels, cuda mma_*, ZLUDA): it interleaves four
    # accumulator chains, so no HMMA->HMMA pair is measurable there.
    mma_chain = [("HMMA", "R", "mma")] if audit.arch != "sm_90" else [("HMMA", "R", "alu")]
    for want in [("ISETP", "P", "guard"), ("IADD3", "R", "memory"), ("IADD3", "R", "fma"),
                 ("IMAD", "R", "alu"), ("HMMA", "R", "memory"), *mma_chain,
                 ("UIADD3", "UR", "uniform"), ("UIADD3", "UR", "fma"), ("HMUL2", "R", "fp16"),
                 ("HSETP2", "P", "alu"), ("SEL", "R", "fp64"), ("IMAD", "P", "alu"),
                 ("F2IP", "R", "alu")]:
        assert want in groups, want


def test_scoreboards_agree_with_ptxas(audit):
    """Opcodes ptxas tracks with a write scoreboard are VARIABLE in our table, and results of
    VARIABLE opcodes are never read without a scoreboard wait covering them."""
    fixed_sb, var_nosb = la.scoreboard_findings(audit)
    assert not fixed_sb, fixed_sb
    assert not [r for r in var_nosb if r[3]], var_nosb


def test_fuzz_corpus_measures_ptxas_distances():
    """`--corpus fuzz`: the fuzzer's programs as a campaign for the arch makes them, ptxas's
    cubins only; fuzz 28001138 (campaign 16, sm_100) has ptxas's HMNMX2 -> HSETP2 at 4, which
    the sm_100 table allows (it asked 5 before branch arch15). `opcodes` skips programs without them.
    The program is campaign 16's: sm_89 PTX (sm_100 campaigns write their own `.target` since
    branch fuzzgen32)."""
    a = la.run_audit(("fuzz",), arch="sm_100", fuzz=([28001138], ("HMNMX2", "HSETP2"), "sm_89"))
    assert a.kernels == 1 and not a.hazards, a.hazards
    assert a.raw["HMNMX2", "R", 0, "alu", "HSETP2"].min == 4
    assert la.run_audit(("fuzz",), arch="sm_100", fuzz=([28001138], ("IMMA",), "sm_89")).kernels == 0


def _table_keys():
    """(family, producer key) of every tensor-core rule a family's table keys by "OPCODE.MOD"."""
    import json
    from ptx2sass.sched.latency import DATA
    for path in sorted(DATA.glob("*.json")):
        d = json.loads(path.read_text())
        pairs = d["reader_pair_fixed"] + d["pair_fixed"] + d.get("reader_pair_exact", [])
        keys = {*d["fixed"], *(r[0] for r in pairs)}
        yield from ((path.stem, k) for k in sorted(keys) if "." in k and k.split(".")[0] in d["mma"])


@pytest.mark.parametrize("family,key", list(_table_keys()))
def test_audit_rows_keep_the_table_keys(family, key):
    """An audit row is judged by the latency of its key: a key folding the modifier a rule is
    keyed by (HMMA.1684 was audited as HMMA, against sm_100's 24 for ptxas's 19) is judged
    against another form's latency."""
    from types import SimpleNamespace
    opcode, *mods = key.split(".")
    assert la.producer_key(SimpleNamespace(opcode=opcode, modifiers=(*mods, "RZ"))) == key


@pytest.mark.parametrize("arch,mods,expected", [
    ("sm_100", ("1684", "F32", "TF32"), 19),      # ptxas: arch15's tests/test_mma_distances.py
    ("sm_90", ("1688", "F32", "TF32"), 24),       # two passes (tf32), where f16's 1688 is one: 16
    ("sm_90", ("1688", "F32"), 16)])
def test_audit_judges_mma_rows_by_their_form(arch, mods, expected):
    """The audit's table figure for an HMMA -> IMAD row is the one its form has."""
    from types import SimpleNamespace
    key = la.producer_key(SimpleNamespace(opcode="HMMA", modifiers=mods))
    assert la.table_latency((key, "R", 3, "alu", "IMAD"), la.model_for(arch)) == expected
