"""Fuzzing the frontend with mutated real PTX: whatever the input, the only exception that
may escape parse/check is CompileError, and no input makes it hang."""
import os
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from frontend_cases import CASES, LLVM_STYLE
from ptx2sass import CompileError
from ptx2sass.frontend import check, parse
from tools.corpora import ptx_files
from tools.make_invalid_corpus import MUTATIONS

SEEDS = [p.read_text() for corpus in ("zluda", "tinygrad")
         for p in ptx_files(corpus)[::23] if p.stat().st_size < 20000]
SEEDS += [CASES["ok_debug_sections"], CASES["ok_rare_syntax"], LLVM_STYLE,
          CASES["ok_textures_samplers_surfaces"], CASES["ok_call_prototype"]]
EXAMPLES = int(os.environ.get("PTX2SASS_FUZZ_EXAMPLES", 200))
CHARS = st.characters(min_codepoint=0, max_codepoint=0x2FF)
TOKENS = st.sampled_from(["{", "}", "(", ")", "[", "]", ";", ",", ":", "@", "!", "|", "+",
                          "-", ".reg", ".u32", ".v4", ".param", ".entry", ".func", "%r1",
                          "_", "0f3F800000", "0x", "99999999999999999999999", "call",
                          "ld.global.v4.f32", ".version 9.0", "\"", "/*", "//", "\n"])


def run_frontend(text: str):
    start = time.perf_counter()
    try:
        check(parse(text, "fuzz.ptx"), "sm_89")
    except CompileError as e:
        assert str(e)  # renders in ptxas's form
    assert time.perf_counter() - start < 10, "frontend took too long"


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(seed=st.sampled_from(SEEDS), mutations=st.lists(
    st.tuples(st.sampled_from(sorted(MUTATIONS)), st.integers(0, 2**32)), min_size=1,
    max_size=4))
def test_structured_mutations(seed, mutations):
    import random
    text = seed
    for name, salt in mutations:
        text = MUTATIONS[name](text, random.Random(salt))
    run_frontend(text)


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(seed=st.sampled_from(SEEDS), position=st.floats(0, 1),
       insert=st.one_of(st.text(CHARS, max_size=8), TOKENS), cut=st.integers(0, 40))
def test_raw_splices(seed, position, insert, cut):
    at = int(position * len(seed))
    run_frontend(seed[:at] + insert + seed[at + cut:])
