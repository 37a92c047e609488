"""The CUDA C corpus (tests/corpus/cuda) is reproducible, accepted by ptxas, runnable and
covers the PTX that tinygrad never writes."""
from __future__ import annotations

import json
import math
import re
from fractions import Fraction

import numpy as np
import pytest

from ptx2sass import oracle
from tools import build_cuda_corpus as builder

CORPUS = builder.CORPUS
REF = builder.load_reference_module()
MANIFEST = json.loads((CORPUS / "manifest.json").read_text())
LAUNCHES = MANIFEST["launches"]
PTX_FILES = sorted(p.name for p in CORPUS.glob("*.ptx"))
ALL_PTX = {name: (CORPUS / name).read_text() for name in PTX_FILES}


# ------------------------------------------------------------------ reproducibility

@pytest.fixture(scope="module")
def regenerated() -> dict[str, str]:
    return builder.generate()


def test_committed_files_are_what_the_pinned_nvcc_makes_now(regenerated):
    """PTX and manifest are regenerated from the .cu sources (nvcc results are cached)."""
    assert sorted(n for n in regenerated if n.endswith(".ptx")) == PTX_FILES
    for name, text in regenerated.items():
        assert (CORPUS / name).read_text() == text, f"{name} is stale: run python -m tools.build_cuda_corpus"


def test_ptx_records_the_pinned_toolchain():
    for name, text in ALL_PTX.items():
        assert ".target sm_89" in text, name
        assert f"release {oracle.PINNED_RELEASE.rsplit('.', 1)[0]}" in text, name


def test_debug_builds_hold_nothing_machine_specific():
    for name, text in ALL_PTX.items():
        assert "/work/" not in text and "site-packages" not in text, name
        assert not re.search(r"ptx2sass-oracle-(?!XXXXXXXX)", text), name
        assert not re.search(r"_INTERNAL_(?!00000000)[0-9a-f]{8}_", text), name
    assert any(".section\t.debug_info" in t for n, t in ALL_PTX.items() if ".G." in n)
    assert all(".loc" in t for n, t in ALL_PTX.items() if ".lineinfo." in n)


def test_normalise_keeps_byte_string_lengths():
    def b8(data: bytes, cut: int) -> str:
        return "".join(".b8 " + ",".join(str(b) for b in part) + "\n" for part in (data[:cut], data[cut:]))
    raw = ('\t.file\t1 "/tmp/ptx2sass-oracle-ab12cd34/x.cu"\n'
           + b8(b"/tmp/ptx2sass-oracle-ab12cd34", 12)            # a path split over two lines
           + b8(b"_ZN37_INTERNAL_4494b8d8_7_warp_cu", 20) + "$L__x: _ZN37_INTERNAL_4494b8d8_7_warp_cu\n")
    want = ('\t.file\t1 "x.cu"\n' + b8(b"/tmp/ptx2sass-oracle-XXXXXXXX", 12)
            + b8(b"_ZN37_INTERNAL_00000000_7_warp_cu", 20) + "$L__x: _ZN37_INTERNAL_00000000_7_warp_cu\n")
    assert builder.normalise_ptx(raw) == want


# ------------------------------------------------------------------ ptxas acceptance

@pytest.mark.parametrize("name", PTX_FILES)
def test_pinned_ptxas_accepts(name):
    run = oracle.ptxas(ALL_PTX[name], "sm_89", name=name)
    assert run.ok, run.stderr


# ------------------------------------------------------------------ manifest

def test_every_kernel_has_a_launch():
    for source in builder.sources():
        kernels = re.findall(r"__global__\s+void\s+(\w+)\s*\(", source.read_text())
        launched = {name for name, _ in builder.parse_launches(source)}
        assert set(kernels) == launched, source.name


def test_launch_names_are_unique_and_all_builds_are_launched():
    names = [e["name"] for e in LAUNCHES]
    assert len(names) == len(set(names))
    assert {e["ptx"] for e in LAUNCHES} == set(PTX_FILES)


@pytest.mark.parametrize("entry", LAUNCHES, ids=lambda e: e["name"])
def test_launch_matches_its_ptx(entry):
    entries = builder.entries(ALL_PTX[entry["ptx"]])
    assert entry["kernel"] in entries
    assert entries[entry["kernel"]] == len(entry["params"])
    assert all(isinstance(v, int) and v > 0 for v in entry["grid"] + entry["block"])
    assert len(entry["grid"]) == len(entry["block"]) == 3
    threads = math.prod(entry["grid"]) * math.prod(entry["block"])
    assert threads <= 4096, "keep launches small: the emulator runs on a CPU"
    for spec in entry["buffers"].values():
        assert spec["size"] == spec["count"] * REF.itemsize(spec["dtype"])


@pytest.mark.parametrize("entry", [e for e in LAUNCHES if "." not in e["name"]], ids=lambda e: e["name"])
def test_reference_runs_and_gives_the_declared_outputs(entry):
    inputs = REF.make_inputs(entry)
    expected = REF.run_reference(entry, inputs)
    for out in entry["outputs"]:
        arr = expected[out["buffer"]]
        assert arr.dtype == REF.STORAGE[out["dtype"]] and arr.size == out["count"]
        if out["compare"]["kind"] != "exact":     # tolerances are meaningless on inf / NaN
            assert np.isfinite(arr.astype(np.float64)).all()
    # An output must not simply be its initial contents (a reference that computes nothing).
    for out in entry["outputs"]:
        assert not np.array_equal(expected[out["buffer"]], inputs[out["buffer"]]), out["buffer"]


def test_variant_builds_share_the_plain_reference():
    plain = {e["name"]: e for e in LAUNCHES if "." not in e["name"]}
    for e in LAUNCHES:
        if "." in e["name"]:
            base = plain[e["name"].split(".")[0]]
            assert {k: v for k, v in e.items() if k not in ("name", "ptx", "nvcc_options", "kernel")} == \
                   {k: v for k, v in base.items() if k not in ("name", "ptx", "nvcc_options", "kernel")}


def test_inputs_are_deterministic_and_launch_json_follows_the_design(tmp_path):
    entry = next(e for e in LAUNCHES if e["name"] == "scalar_params")
    first, second = REF.make_inputs(entry), REF.make_inputs(entry)
    assert all(np.array_equal(first[k], second[k]) for k in first)
    doc = REF.launch_json(entry, tmp_path)
    assert set(doc) == {"kernel", "grid", "block", "dynamic_shared_bytes", "buffers", "params"}
    assert (tmp_path / doc["buffers"]["v"]["file"]).read_bytes() == first["v"].tobytes()
    assert doc["buffers"]["out"] == {"size": entry["buffers"]["out"]["size"], "fill": 0}
    assert doc["params"][2] == {"type": "u64", "value": 81985529216486895}


@pytest.mark.parametrize("spec, message", [
    ({"dtype": "f99", "count": 4}, "unknown dtype"),
    ({"dtype": "u8", "count": 4, "init": "gaussian"}, "unknown init"),
    ({"dtype": "u8", "count": 2, "init": "values", "values": [300]}, "out of range"),
    ({"dtype": "f32", "count": 2, "init": "random_bits", "seed": 1}, "integer buffers"),
])
def test_bad_buffer_specs_are_clear_errors(spec, message):
    with pytest.raises(REF.SpecError, match=message):
        REF.make_buffer(spec)


# ------------------------------------------------------------------ reference arithmetic
# The exact rounding helpers are checked against NumPy's own (IEEE) conversions.

def test_round_to_nearest_matches_numpy_conversions():
    rng = np.random.Generator(np.random.PCG64(7))
    values = np.concatenate([rng.standard_normal(2000) * 10.0 ** rng.integers(-45, 39, 2000),
                             [65519.99, 65520.0, 3.4028235677973366e38, 1e-45, 7e-46, -0.0]])
    with np.errstate(over="ignore"):
        for v in values.tolist():
            for fmt, np_type in (("f32", np.float32), ("f16", np.float16)):
                got, want = REF.round_float(v, fmt), float(np_type(v))
                assert got == want and math.copysign(1, got) == math.copysign(1, want), (fmt, v)


def test_directed_rounding_brackets_the_exact_value():
    rng = np.random.Generator(np.random.PCG64(8))
    for a, b in rng.uniform(-100, 100, (300, 2)).astype(np.float32).tolist():
        q = Fraction(a) / Fraction(b)
        lo, hi = REF.round_fraction(q, "f32", "rd"), REF.round_fraction(q, "f32", "ru")
        assert Fraction(lo) <= q <= Fraction(hi)
        assert hi == lo or float(np.nextafter(np.float32(lo), np.float32(np.inf))) == hi
        assert REF.round_fraction(q, "f32", "rz") == (lo if q > 0 else hi)
        assert REF.round_fraction(q, "f32", "rn") == float(np.float32(a) / np.float32(b))


def test_sqrt_rounding_matches_numpy_and_brackets():
    rng = np.random.Generator(np.random.PCG64(9))
    for x in rng.uniform(0, 1e6, 500).astype(np.float32).tolist():
        assert REF.sqrt_round(x, "f32", "rn") == float(np.sqrt(np.float32(x)))
        lo, hi = REF.sqrt_round(x, "f32", "rd"), REF.sqrt_round(x, "f32", "ru")
        assert Fraction(lo) ** 2 <= Fraction(x) <= Fraction(hi) ** 2
    for x in rng.uniform(0, 1e9, 200).tolist():
        assert REF.sqrt_round(x, "f64", "rn") == math.sqrt(x)


def test_fp8_and_bf16_encodings():
    assert REF.fp8_bits(448.0, "e4m3") == 0x7E and REF.fp8_bits(57344.0, "e5m2") == 0x7B
    assert REF.fp8_bits(REF.round_float(1e9, "e4m3", "rn", satfinite=True), "e4m3") == 0x7E
    assert REF.fp8_bits(-0.0, "e5m2") == 0x80 and REF.fp8_bits(2.0 ** -9, "e4m3") == 0x01
    assert REF.f32_to_bf16_bits(1.0) == 0x3F80 and REF.f32_to_bf16_bits(1.00390625) == 0x3F80
    assert REF.f32_to_bf16_bits(1.01171875) == 0x3F82    # tie rounds to even


def test_comparison_tolerances():
    one = np.array([1.0, 2.0, -0.0], dtype=np.float32)
    near = np.nextafter(one, np.float32(np.inf))
    far = one + np.float32(1e-5)
    assert REF.mismatch("f32", one, one, REF.EXACT) is None
    assert REF.mismatch("f32", np.abs(one), one, REF.EXACT) is not None      # -0.0 != +0.0
    assert REF.mismatch("f32", near, one, REF.ulps(1)) is None
    assert REF.mismatch("f32", far, one, REF.ulps(4)) is not None
    assert REF.mismatch("f32", far, one, REF.close(rtol=2e-5, atol=2e-5)) is None
    bf = np.array([0x3F80, 0x4000], dtype=np.uint16)                         # 1.0, 2.0
    assert REF.mismatch("bf16", bf + 1, bf, REF.ulps(1)) is None
    assert REF.mismatch("bf16", bf + 2, bf, REF.ulps(1)) is not None


def test_prmt_follows_the_ptx_isa():
    a, b = 0x33221100, 0x77665544          # byte k of {b, a} holds 0x11 * k
    assert REF.prmt(a, b, 0x3210) == a and REF.prmt(a, b, 0x7654) == b
    assert REF.prmt(0x00007F80, 0, 0x1098) == 0x7F8000FF   # nibble bit 3: replicate the sign
    # .ecr, selector 0..3 -> source bytes (b3, b2, b1, b0): (0000), (1110), (2210), (3210)
    assert [REF.prmt_ecr(a, b, c) for c in range(4)] == [0x00000000, 0x11111100, 0x22221100, a]


def test_bfe_bfi_follow_the_ptx_isa():
    assert REF.bfe(0xF0F0F0F0, 4, 8, 32, False) == 0x0F
    assert REF.bfe(0x80000000, 28, 8, 32, True) == 0xFFFFFFF8   # field runs past bit 31
    assert REF.bfe(0x80000000, 40, 5, 32, True) == 0xFFFFFFFF   # start past the msb: sign fill
    assert REF.bfe(0x80000000, 40, 5, 32, False) == 0 and REF.bfe(0xFFFFFFFF, 3, 0, 32, True) == 0
    assert REF.bfe(0x1FF, 256 + 4, 256 + 4, 32, False) == 0xF    # pos and len are taken mod 256
    assert REF.bfi(0xFF, 0, 28, 8, 32) == 0xF0000000


def test_float_to_int_clamps_like_ptx_cvt():
    assert REF.f2i(float("nan"), "rn", "s32") == 0
    assert REF.f2i(3e9, "rz", "s32") == 2**31 - 1 and REF.f2i(-1.5, "rn", "u32") == 0
    assert REF.f2i(2.5, "rn", "s8") == 2 and REF.f2i(-2.5, "rd", "s8") == -3
    assert REF.f2i(float("-inf"), "ru", "s64") == -2**63


# ------------------------------------------------------------------ PTX coverage
# What the corpus is for: PTX that tinygrad's renderer does not produce. If an edit drops one
# of these, the corpus no longer does its job.

COVERAGE = {
    "device function": r"^\.func\b", "direct call": r"\bcall\.uni\b",
    "indirect call": r"\.callprototype\b", "jump table": r"\bbrx\.idx\b",
    "branch targets": r"\.branchtargets\b",
    "atom add f32": r"\batom\.global\.add\.f32\b", "atom add f64": r"\batom\.global\.add\.f64\b",
    "atom add u64": r"\batom\.global\.add\.u64\b", "atom cas b32": r"\batom\.global\.cas\.b32\b",
    "atom cas b64": r"\batom\.global\.cas\.b64\b", "atom exch": r"\batom\.global\.exch\.b32\b",
    "atom max s64": r"\batom\.global\.max\.s64\b", "atom min u32": r"\batom\.global\.min\.u32\b",
    "atom inc": r"\batom\.global\.inc\.u32\b", "atom dec": r"\batom\.global\.dec\.u32\b",
    "atom and/or/xor": r"\batom\.global\.xor\.b64\b", "atom scoped": r"\batom\.global\.(cta|sys)\.",
    "atom shared": r"\batom\.shared\.add\.u32\b", "atom shared cas": r"\batom\.shared\.cas\.b32\b",
    "red": r"\bred\.global\.add\.u32\b",
    "shfl up": r"\bshfl\.sync\.up\.b32\b", "shfl down": r"\bshfl\.sync\.down\.b32\b",
    "shfl bfly": r"\bshfl\.sync\.bfly\.b32\b", "shfl idx": r"\bshfl\.sync\.idx\.b32\b",
    "vote ballot": r"\bvote\.sync\.ballot\.b32\b", "vote any": r"\bvote\.sync\.any\.pred\b",
    "vote all": r"\bvote\.sync\.all\.pred\b", "activemask": r"\bactivemask\.b32\b",
    "match any": r"\bmatch\.any\.sync\.b(32|64)\b", "match all": r"\bmatch\.all\.sync\.b32\b",
    "redux": r"\bredux\.sync\.(add|min|max|and|or|xor)\b",
    "div.rn f32": r"\bdiv\.rn\.f32\b", "div.rn f64": r"\bdiv\.rn\.f64\b",
    "div directed": r"\bdiv\.(rz|rm|rp)\.f(32|64)\b",
    "sqrt.rn f32": r"\bsqrt\.rn\.f32\b", "sqrt.rn f64": r"\bsqrt\.rn\.f64\b",
    "sqrt directed": r"\bsqrt\.(rm|rp)\.f(32|64)\b",
    "rcp.rn f32": r"\brcp\.rn\.f32\b", "rcp.rn f64": r"\brcp\.rn\.f64\b",
    "fma.rn f32": r"\bfma\.rn\.f32\b", "fma.rn f64": r"\bfma\.rn\.f64\b",
    "add/mul directed": r"\b(add|mul)\.(rz|rm|rp)\.f32\b",
    "div approx": r"\bdiv\.(approx|full)\.ftz\.f32\b", "sqrt approx": r"\bsqrt\.approx\.ftz\.f32\b",
    "rsqrt approx": r"\brsqrt\.approx\.ftz\.f32\b", "rcp approx": r"\brcp\.approx\.ftz\.f32\b",
    "ex2 approx": r"\bex2\.approx\.ftz\.f32\b", "lg2 approx": r"\blg2\.approx\.ftz\.f32\b",
    "sin approx": r"\bsin\.approx\.ftz\.f32\b", "cos approx": r"\bcos\.approx\.ftz\.f32\b",
    "cvt f->int rn": r"\bcvt\.rni\.s32\.f32\b", "cvt f->int rz": r"\bcvt\.rzi\.s32\.f32\b",
    "cvt f->int rp": r"\bcvt\.rpi\.s64\.f32\b", "cvt f->int rm": r"\bcvt\.rmi\.u64\.f32\b",
    "cvt f64->int": r"\bcvt\.rni\.u64\.f64\b", "cvt f32->8-bit": r"\bcvt\.rmi\.s8\.f32\b",
    "cvt f64->s16": r"\bcvt\.rni\.s16\.f64\b",
    "cvt int->f directed": r"\bcvt\.(rz|rm|rp)\.f32\.(s|u)(32|64)\b",
    "cvt int->f64": r"\bcvt\.rn\.f64\.s64\b",
    "cvt f64->f32": r"\bcvt\.rn\.f32\.f64\b", "cvt f64->f32 directed": r"\bcvt\.(rz|rm|rp)\.f32\.f64\b",
    "cvt f32->f64": r"\bcvt\.f64\.f32\b", "cvt round to integral": r"\bcvt\.rmi\.f32\.f32\b",
    "cvt f16": r"\bcvt\.rn\.f16\.f32\b", "cvt f16 rz": r"\bcvt\.rz\.f16\.f32\b",
    "cvt from f16": r"\bcvt\.f32\.f16\b", "cvt bf16": r"\bcvt\.rn\.bf16\.f32\b",
    "cvt from bf16": r"\bcvt\.f32\.bf16\b", "cvt f16x2": r"\bcvt\.rn\.f16x2\.f32\b",
    "cvt bf16x2": r"\bcvt\.rn\.bf16x2\.f32\b", "cvt relu": r"\bcvt\.rn\.relu\.f16x2\.f32\b",
    "cvt fp8": r"\bcvt\.rn\.satfinite\.e4m3x2\.f32\b", "cvt e5m2": r"\bcvt\.rn\.satfinite\.e5m2x2\.f32\b",
    "cvt tf32": r"\bcvt\.rna\.tf32\.f32\b", "cvt sat float": r"\bcvt\.sat\.f32\.f32\b",
    "cvt sat int": r"\bcvt\.sat\.s8\.s32\b", "cvt narrow/widen": r"\bcvt\.s64\.s32\b",
    "prmt": r"\bprmt\.b32\s", "prmt mode": r"\bprmt\.b32\.ecr\b",
    "bfe": r"\bbfe\.(u32|s32|s64)\b", "bfi": r"\bbfi\.b(32|64)\b",
    "popc": r"\bpopc\.b(32|64)\b", "clz": r"\bclz\.b(32|64)\b", "brev": r"\bbrev\.b(32|64)\b",
    "bfind": r"\bbfind\.", "funnel shift": r"\bshf\.(l|r)\.(wrap|clamp)\.b32\b",
    "mul.hi": r"\bmul\.hi\.(s|u)(32|64)\b", "sad": r"\bsad\.(s|u)32\b",
    "dp4a": r"\bdp4a\.s32\.s32\b", "dp2a": r"\bdp2a\.(lo|hi)\.",
    "div s32": r"\bdiv\.s32\b", "div u32": r"\bdiv\.u32\b", "div s64": r"\bdiv\.s64\b",
    "div u64": r"\bdiv\.u64\b", "rem s32": r"\brem\.s32\b", "rem u32": r"\brem\.u32\b",
    "rem u64": r"\brem\.u64\b", "div/rem 16-bit": r"\b(div|rem)\.u16\b",
    "cp.async ca": r"\bcp\.async\.ca\.shared\.global\b", "cp.async cg": r"\bcp\.async\.cg\.shared\.global\b",
    "cp.async commit": r"\bcp\.async\.commit_group\b", "cp.async wait": r"\bcp\.async\.wait_group\b",
    "cp.async wait all": r"\bcp\.async\.wait_all\b",
    "ldmatrix": r"\bldmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16\b",
    "ldmatrix trans": r"\bldmatrix\.sync\.aligned\.m8n8\.x(2|4)\.trans\.shared\.b16\b",
    "mma f16": r"\bmma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.f16\.f16\.f32\b",
    "mma f16 acc": r"\bmma\.sync\.aligned\.m16n8k16\.row\.col\.f16\.f16\.f16\.f16\b",
    "mma bf16": r"\bmma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.bf16\.bf16\.f32\b",
    "mma s8": r"\bmma\.sync\.aligned\.m16n8k32\.row\.col\.s32\.s8\.s8\.s32\b",
    "mma tf32": r"\bmma\.sync\.aligned\.m16n8k8\.row\.col\.f32\.tf32\.tf32\.f32\b",
    "local memory load": r"\bld\.local\.", "local memory store": r"\bst\.local\.",
    "local frame": r"\.local \.align \d+ \.b8\s+__local_depot",
    "shared static": r"^\s*\.shared \.align", "shared dynamic": r"^\.extern \.shared\b",
    "shared vector load": r"\bld\.shared\.v4\.", "barrier": r"\bbar\.sync\b",
    "const bank": r"^\.const \.align", "const load": r"\bld\.const\.",
    "global with initialiser": r"^\.global \.align \d+ \.\w+ \w+(\[\d+\])? = ",
    "function-pointer table": r"^\.global .* = \{_Z",
    "global vector load": r"\bld\.global\.nc\.v4\.f32\b", "cache hints": r"\bld\.global\.(cg|cs|ca)\.",
    "store hints": r"\bst\.global\.(cs|wt)\.", "volatile": r"\bld\.volatile\.global\.",
    "fence": r"\bmembar\.gl\b", "3-D ids": r"%(ctaid|tid|ntid|nctaid)\.z\b",
    "scalar u64/f64/u8 params": r"\.param \.(u64|f64|u8) \w+_param_\d",
    "line info": r"^\s*\.loc\s", "DWARF": r"\.section\s+\.debug_info",
}


@pytest.mark.parametrize("feature", sorted(COVERAGE))
def test_corpus_covers(feature):
    pattern = re.compile(COVERAGE[feature], re.M)
    assert any(pattern.search(text) for text in ALL_PTX.values()), \
        f"no PTX in tests/corpus/cuda matches {COVERAGE[feature]!r}"
