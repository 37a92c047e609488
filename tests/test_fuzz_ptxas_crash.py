"""A ptxas crash (a signal) on a generated or reduced program is an outcome, not an
exception that ends a campaign or a reduction (`ptx2sass-fuzz reduce 8900344` died on a
SIGSEGV of ptxas on one of its candidate programs). It is ptxas's own failure, like its
internal compiler error: `ptxas_ice`, with ours compiled and run alone (branch fuzz30)."""
from ptx2sass import oracle
from ptx2sass.fuzz.campaign import Options, case_from_program, make_program
from ptx2sass.fuzz.runner import run_case


def test_ptxas_crash_is_a_ptxas_ice_outcome(monkeypatch):
    case = case_from_program(make_program(100000, Options()))     # the generator asks ptxas too

    def crash(*args, **kwargs):
        raise oracle.OracleFailed("ptxas -arch=sm_89 fuzz.ptx -o out.cubin crashed with signal 11")
    monkeypatch.setattr(oracle, "ptxas", crash)
    out = run_case(case)
    assert out.cls == "ptxas_ice", (out.sig, out.detail)
    assert "ptxas crashed" in out.sig
    assert out.ours.get("instructions")          # ours compiled and ran
