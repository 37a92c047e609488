"""The fuzzer's error bound for rcp/rsqrt.approx.f64: their result is a double's high word
(20 mantissa bits), so its last bit alone is 2^-20 relative, and ptxas's constant folding
and the MUFU round it apart. Fresh seed 20100381 (branch triage9's sanity run): ptxas folds
`rcp.approx.ftz.f64` of a value it knows to high word 0xf2b4d92a, our MUFU.RCP64H gives
0xf2b4d92b: a mismatch under the old 2^-21 bound."""
from ptx2sass.fuzz.campaign import Options, make_program, peel_until
from ptx2sass.fuzz.generator import TOL


def test_f64_approximation_bounds_cover_the_last_bit_of_a_high_word():
    assert TOL["rcp64"] >= 2 ** -20 and TOL["rsqrt64"] >= 2 ** -20


def test_seed_with_a_folded_rcp_approx_f64_passes():
    out, case, _ = peel_until(make_program(20100381, Options()), Options())
    assert any(s[4] == "rcp.approx.ftz.f64" for s in case.slots)
    assert out.cls == "pass", (out.sig, out.detail)
