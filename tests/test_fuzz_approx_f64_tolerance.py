"""The fuzzer's error bound for rcp/rsqrt.approx.f64: their result is a double's high word
(20 mantissa bits, the low word zero), so its last bit alone is 2^-20 relative, and ptxas's
constant folding and the MUFU round it apart. Fresh seed 20100381 (branch triage9's sanity
run, the generator of that day): ptxas folded `rcp.approx.ftz.f64` of a value it knew to
high word 0xf2b4d92a, our MUFU.RCP64H gave 0xf2b4d92b (both outputs of that run): a mismatch
under the old 2^-21 bound."""
from ptx2sass.fuzz.generator import TOL
from ptx2sass.fuzz.runner import equal_slot

OURS, PTXAS = 0xF2B4D92B00000000, 0xF2B4D92A00000000


def test_f64_approximation_bounds_cover_the_last_bit_of_a_high_word():
    assert TOL["rcp64"] >= 2 ** -20 and TOL["rsqrt64"] >= 2 ** -20


def test_the_two_high_words_of_seed_20100381_compare_equal():
    assert equal_slot(OURS, PTXAS, 64, ("f64",), TOL["rcp64"])
    assert not equal_slot(OURS, PTXAS, 64, ("f64",), 2 ** -21)      # the old bound
    assert not equal_slot(OURS, PTXAS + (8 << 32), 64, ("f64",), TOL["rcp64"])   # 8 units off
