"""The fuzz runner's `ptxas_wrong` class (ptx2sass/fuzz/departures.py): a mismatch whose first
difference is one of ptxas's pinned departures from the manual is reported apart.

Each rule is checked against ptxas's own cubin of the pinned test's program (its listing)
and the two values that test pins; a near miss of each rule stays unrecognised; and a
reduced campaign program (`tests/fuzz_departures/`) is classified end to end."""
import ast
from pathlib import Path

import pytest

from ptx2sass import oracle
from ptx2sass.fuzz import departures
from ptx2sass.fuzz.departures import DEPARTURES, recognise
from ptx2sass.fuzz.inputs import read_case
from ptx2sass.fuzz.runner import CLASSES, PRIORITY, run_case

ROOT = Path(__file__).resolve().parents[1]
PINNED = ROOT / departures.TEST_FILE

# (departure test, its program's constant in the pinned file, key, ours, theirs, width, a near
# miss (ours, theirs)): the values that file's test pins for ptx2sass and for ptxas, and a
# pair the departure cannot give
CASES = [
    ("test_u16_set_of_a_half_set_result_compares_its_16_bits", "U16_SET_OF_A_HALF_SET",
     "set.gt.s32.u16", 0, 0xFFFFFFFF, 32, (0, 0)),
    ("test_s64_of_a_half_set_result_is_its_bits_when_the_kernel_calls", "S64_OF_A_HALF_SET_WITH_A_CALL",
     "cvt.s64.s16", 0x3C00, 1, 64, (0x3C00, 2)),
    ("test_cvt_rzi_of_a_cnot_result_as_f16_truncates_to_zero", "CVT_RZI_OF_A_CNOT_RESULT",
     "cvt.rzi.s8.f16", 0, 1, 16, (0, 2)),
    ("test_max_f32_of_a_saturated_mad_hi_is_the_maximum", "MAX_F32_OF_A_SATURATED_MAD_HI",
     "max.f32", 0xBF800000, 0xC0000000, 32, (0x5, 0x5)),
    ("test_saturating_narrow_of_neg_of_the_most_negative_s16_is_minus_128", "SATURATE_S8_OF_NEG_S16",
     "add.s16", 0x7F80, 0x807F, 16, (0x7F80, 0x807E)),
    ("test_saturating_narrow_of_neg_of_the_most_negative_s16_is_minus_128", "SATURATE_ABS_OF_MOST_NEGATIVE",
     "cvt.sat.s8.s32", 0xFFFFFF80, 0x7F, 32, (0xFFFFFF80, 0x7E)),
    ("test_saturating_f16_move_of_a_saturated_u16_clamps_to_0_1", "SATURATE_F16_AFTER_SATURATE_U16",
     "cvt.sat.f16.f16", 0x0000, 0x7FFF, 16, (0x3C00, 0x7FFF)),
    ("test_saturating_f16_move_of_a_saturated_u16_clamps_to_0_1", "SATURATE_F16_AFTER_SATURATE_U16",
     "cvt.sat.f16.f16", 0x3C00, 0x4000, 16, (0x3BFF, 0x4000)),
    ("test_neg_f64_of_a_cnot_result_flips_the_sign_bit", "NEG_F64_OF_A_CNOT_RESULT",
     "neg.f64", 1 << 63, 0, 64, (1 << 63, (1 << 63) - 1)),
    ("test_neg_f64_of_a_cnot_result_flips_the_sign_bit", "NEG_F64_OF_A_CNOT_RESULT",
     "neg.f64", 1 << 63 | 1, (1 << 63) - 1, 64, (1 << 63 | 1, 0)),
    ("test_neg_f16_of_a_cnot_result_flips_the_sign_bit", "NEG_F16_OF_A_CNOT_RESULT",
     "neg.ftz.f16", 0x0000, 0x8000, 16, (0x0001, 0x8000)),
    ("test_neg_f16_of_a_cnot_result_flips_the_sign_bit", "NEG_F16_OF_A_CNOT_RESULT",
     "neg.f16", 0x8001, 0x7FFF, 16, (0x8001, 0x0000)),
    ("test_float_min_of_a_saturated_vmin_is_not_clamped_to_one", "MIN_F32_OF_A_SATURATED_VMIN",
     "min.ftz.f32", 0x447A0000, 0x3F800000, 32, (0x3F000000, 0x3F800000)),
    ("test_f16x2_min_reads_the_zero_upper_lane_of_a_u16_load", "F16X2_MIN_OF_A_U16_LOAD_BESIDE_A_HALF",
     "min.NaN.xorsign.abs.f16x2", 0x00001234, 0xBC001234, 32, (0x00001234, 0xBC001235)),
    ("test_u16_compare_of_a_half_set_result_reads_its_16_bits", "U16_COMPARE_OF_HALF_SET",
     "setp.lt.xor.u16", 0, 1, 32, (0, 2)),
    ("test_u16_multiply_of_a_half_set_result_reads_its_16_bits", "U16_MULTIPLY_OF_HALF_SET",
     "mad.wide.u16", 0x0DDA1810, 0x25DA1810, 32, (0x0DDA1810, 0x25DA1811)),
    ("test_64bit_left_shift_by_an_immediate_of_64_or_more_is_zero", "SHL64_BY_AN_IMMEDIATE_OF_64_OR_MORE",
     "shl.b64", 0, 0x369CF, 64, (1, 0x369CF)),
    ("test_f16x2_compare_reads_the_sign_extended_upper_half_of_an_s16_load", "F16X2_SET_OF_AN_S16_LOAD_BESIDE_AN_S16",
     "set.eq.ftz.s32.f16x2", 0x0000FFFF, 0xFFFFFFFF, 32, (0x0000FFFF, 0xFFFFFFFE)),
    ("test_m8n8k4_reads_the_zero_upper_half_of_a_u16_load", "M8N8K4_OF_A_U16_LOAD_BESIDE_A_HALF",
     "private atomic word", 0x42004200, 0x45004500, 64, (0x42004200, 0x42004200)),
    ("test_sad_s16_adds_the_sign_extended_byte", "SAD_S16_OF_SIGNED_BYTE",
     "sad.s16", 2, 0x102, 16, (2, 0x103)),
    ("test_s64_of_an_f32_set_result_is_one_point_zero_when_the_kernel_has_a_sqrt", "S64_OF_AN_F32_SET_WITH_A_SQRT",
     "cvt.s64.u32", 0x3F800000, 1, 64, (0x3F800000, 2)),
    ("test_sad_s16_of_a_half_set_result_is_its_bits_when_the_kernel_has_a_sqrt", "SAD_S16_OF_A_HALF_SET_WITH_A_SQRT",
     "sad.s16", 0x3C00, 31, 16, (0x3C00, 30)),
    ("test_neg_f32_of_an_integer_set_result_is_a_nan", "NEG_OF_AN_INTEGER_SET",
     "neg.f32", 0x7FFFFFFF, 0x00000001, 32, (0x7F800000, 0x00000001)),
    ("test_neg_f32_of_an_integer_set_result_is_a_nan", "NEG_OF_SET_F32",
     "neg.f32", 0x80000000, 0x00000000, 32, (0x00000000, 0x00000000)),
]


def test_unwritten_uniform_predicate_rule():
    """The one rule on the listing alone: ptxas's fn2 returns `USEL ..., UP0` of a UP0
    nothing writes; a UIADD3 carry-out (a write in the second operand) read by UIADD3.X is
    not it."""
    ptx = _programs()["FUNC_RESULT_FROM_AN_UNWRITTEN_UNIFORM_PREDICATE"]
    cubin = oracle.ptxas(ptx).output
    found = recognise("vabsdiff.u32.u32.u32", 0, 0xFFFF, 32, ptx, lambda: oracle.cuobjdump_sass(cubin))
    assert found is not None and found.test == "test_func_result_does_not_come_from_an_unwritten_uniform_predicate"
    carry = ("        /*0020*/                   UIADD3 UR4, UP0, UR4, 0x48, URZ ;\n"
             "        /*0040*/                   UIADD3.X UR5, URZ, UR5, URZ, UP0, !UPT ;\n")
    assert not departures.reads_unwritten_uniform_predicate(carry)
    assert departures.reads_unwritten_uniform_predicate(carry.replace("UP0, UR4", "UR6, UR4"))


def test_predicate_no_path_of_its_function_writes():
    """Campaign 10's whole program of seed 22005165: ptxas's fn2 returns `SEL R31, RZ,
    0xffffffff, P6` and only the kernel writes P6 (predicates are not call arguments).
    Writes on one path, a write after the read, and a callee's writes are told apart."""
    case = read_case((ROOT / "tests/fuzz_departures/func_result_from_callers_predicate_s22005165.ptx").read_text())
    listing = oracle.cuobjdump_sass(oracle.ptxas(case.text, "sm_89").output)
    assert not departures.reads_unwritten_uniform_predicate(listing)
    assert departures.undefined_predicate_read(listing.split("Function :")[1])[1] == "SEL R31, RZ, 0xffffffff, P6"
    line = "        /*{:04x}*/  {} ;\n"
    fn = lambda *ins: "".join(line.format(16 * i, t) for i, t in enumerate(ins))
    branch = fn("ISETP.NE.AND P0, PT, R0, RZ, PT", "@P0 BRA 0x40", "ISETP.EQ.AND P1, PT, R0, RZ, PT",
                "BRA 0x50", "ISETP.GT.AND P1, PT, R0, RZ, PT", "SEL R2, RZ, 0x1, P1", "EXIT")
    assert not departures.reads_undefined_predicate(branch)        # written on both paths
    one_path = branch.replace("ISETP.GT.AND P1", "ISETP.GT.AND P2")
    assert not departures.reads_undefined_predicate(one_path)      # P1 written on one path: may be defined
    late = fn("SEL R2, RZ, 0x1, P1", "ISETP.GT.AND P1, PT, R0, RZ, PT", "EXIT")
    assert departures.reads_undefined_predicate(late)
    assert departures.reads_undefined_predicate(fn("@P3 EXIT", "EXIT"))
    call = fn("CALL.REL.NOINC 0x30", "SEL R2, RZ, 0x1, P1", "EXIT", "ISETP.GT.AND P1, PT, R0, RZ, PT",
              "RET.REL.NODEC R20 0x0")
    assert not departures.reads_undefined_predicate(call)          # the callee may have written it
    assert departures.reads_undefined_predicate(call.replace("ISETP.GT.AND P1, PT, R0, RZ, PT", "SEL R3, RZ, 0x1, P4"))


def test_whole_campaign_program_with_a_caller_s_predicate_is_ptxas_wrong():
    path = ROOT / "tests/fuzz_departures/func_result_from_callers_predicate_s22005165.ptx"
    out = run_case(read_case(path.read_text()))
    assert out.cls == "ptxas_wrong", (out.sig, out.detail)
    assert out.findings == [["ptxas_wrong", "ptxas_wrong: ptxas reads a predicate it never writes"]]


def _programs() -> dict[str, str]:
    """The PTX constants of the pinned departures file (HEAD + body), without importing it."""
    tree = ast.parse(PINNED.read_text())
    consts = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            try:
                consts[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                if isinstance(node.value, ast.BinOp):
                    consts[node.targets[0].id] = consts["HEAD"] + ast.literal_eval(node.value.right)
                elif isinstance(node.value, ast.Call) and node.value.func.attr == "replace":
                    # OTHER.replace(a, b): a variant of a program above
                    base = consts[node.value.func.value.id]
                    consts[node.targets[0].id] = base.replace(*map(ast.literal_eval, node.value.args))
    return consts


def test_every_departure_names_a_pinned_test():
    names = {n.name for n in ast.walk(ast.parse(PINNED.read_text())) if isinstance(n, ast.FunctionDef)}
    for d in DEPARTURES:
        assert d.test in names, d.name


def test_ptxas_wrong_is_its_own_class_below_every_bug_class():
    assert "ptxas_wrong" in CLASSES
    assert PRIORITY.index("ptxas_wrong") > max(PRIORITY.index(c) for c in ("mismatch", "emu_fail", "hazard"))


@pytest.mark.parametrize("test, program, key, ours, theirs, width, miss", CASES)
def test_rule_recognises_the_pinned_program(test, program, key, ours, theirs, width, miss):
    ptx = _programs()[program]
    cubin = oracle.ptxas(ptx).output
    found = recognise(key, ours, theirs, width, ptx, lambda: oracle.cuobjdump_sass(cubin))
    assert found is not None and found.test == test
    # a pair of values the departure cannot give, or a program without the chain, is not it
    assert recognise(key, *miss, width, ptx, lambda: oracle.cuobjdump_sass(cubin)) is None
    assert recognise(key, ours, theirs, width, HEAD_ONLY, lambda: oracle.cuobjdump_sass(cubin)) is None


HEAD_ONLY = ".version 8.5\n.target sm_89\n.address_size 64\n"


def test_plain_mismatch_of_the_same_instruction_stays_a_mismatch():
    """cvt.sat.f16.f16 where ptxas kept `.SAT` (a plain ld.u16 source): not the departure."""
    ptx = _programs()["SATURATE_F16_AFTER_SATURATE_U16"].replace("cvt.sat.u16.u32 %h0, %r0;", "cvt.u16.u32 %h0, %r0;")
    cubin = oracle.ptxas(ptx).output
    assert recognise("cvt.sat.f16.f16", 0, 0x7FFF, 16, ptx, lambda: oracle.cuobjdump_sass(cubin)) is None


def test_reduced_campaign_program_is_classified_ptxas_wrong():
    path = ROOT / "tests/fuzz_departures/neg_f64_of_cnot_s22003533.ptx"
    out = run_case(read_case(path.read_text()))
    assert out.cls == "ptxas_wrong", (out.sig, out.detail)
    assert out.findings == [["ptxas_wrong", "ptxas_wrong: neg.f64 of a cnot.b64 result as integer negation"]]


def test_reduced_program_with_an_ftz_compare_folded_into_a_branch_is_ptxas_wrong():
    """Campaign 13 (sm_90), seed 25000269 reduced: ptxas's `FSETP.LTU.AND` (no .FTZ) feeds
    `@!P0 BRA P1`; a sad.s32 after the join differs (test_ftz_compare_feeding_a_branch_...)."""
    path = ROOT / "tests/fuzz_departures/ftz_compare_branch_s25000269.ptx"
    out = run_case(read_case(path.read_text()))
    assert out.cls == "ptxas_wrong", (out.sig, out.detail)
    assert out.findings[-1] == ["ptxas_wrong", "ptxas_wrong: ftz compare folded into a predicated branch loses .ftz"]


def test_reduced_program_with_an_fp8_mma_whose_d_aliases_c_is_ptxas_wrong():
    """Campaign 13 (sm_90), seed 25000778 reduced: the fp8 mma's D shares %r4/%r2 with C;
    the first difference is a later vabsdiff (test_fp8_mma_on_sm90_reads_c_before_writing_d)."""
    path = ROOT / "tests/fuzz_departures/fp8_mma_c_aliases_d_s25000778.ptx"
    out = run_case(read_case(path.read_text()))
    assert out.cls == "ptxas_wrong", (out.sig, out.detail)
    assert out.findings[-1] == ["ptxas_wrong", "ptxas_wrong: sm_90 fp8 mma adds an already written D register as C"]


def test_reduced_program_with_a_16bit_shift_by_a_cnot_result_is_ptxas_wrong():
    path = ROOT / "tests/fuzz_departures/shl16_by_cnot_s25000673.ptx"
    out = run_case(read_case(path.read_text()))
    assert out.cls == "ptxas_wrong", (out.sig, out.detail)


def test_reduced_program_with_an_fp8_mma_result_in_a_private_atomic_word_is_ptxas_wrong():
    """Campaign 13 (sm_90), seed 25000762 reduced: the fp8 mma's D shares %r5/%r0 with C and
    the first difference is the `red.global.add.s32` of %r0 into the thread's private atomics
    block (no output slot differs): the runner reads that word too."""
    path = ROOT / "tests/fuzz_departures/fp8_mma_private_atomic_s25000762.ptx"
    out = run_case(read_case(path.read_text()))
    assert out.cls == "ptxas_wrong", (out.sig, out.detail)
    assert out.findings[-1] == ["ptxas_wrong", "ptxas_wrong: sm_90 fp8 mma adds an already written D register as C"]


def test_private_atomic_word_without_the_aliased_fp8_mma_is_not_a_departure():
    """The near miss: the same first difference (a private atomic word) in a program whose
    fp8 mma writes D to registers C does not hold is no departure; and a contended counter
    (no thread's own word) is not matched by a departure in values (only by one in which
    threads run an atomic: the unwritten-predicate rule, seed 34001441 below)."""
    import numpy as np
    from ptx2sass.fuzz.program import COUNTER_BYTES, PRIVATE_BYTES
    from ptx2sass.fuzz.runner import known_departure
    case = read_case((ROOT / "tests/fuzz_departures/fp8_mma_private_atomic_s25000762.ptx").read_text())
    cubin = oracle.ptxas(case.text, "sm_90").output
    size = COUNTER_BYTES + PRIVATE_BYTES * case.threads
    ours, theirs = np.zeros(size // 8, np.uint64), np.zeros(size // 8, np.uint64)
    theirs[COUNTER_BYTES // 8 + 1] = 0x4100
    out = {"out": np.zeros(case.threads * max(1, len(case.slots)), np.uint64).tobytes()}
    bufs = lambda atom: {**out, "atom": atom.tobytes()}
    assert known_departure(case, bufs(ours), bufs(theirs), cubin) is not None
    unaliased = case.text.replace("{%r6, %r5, %r0, %r1};", "{%r6, %r6, %r6, %r1};")
    assert unaliased != case.text
    case.text = unaliased
    assert known_departure(case, bufs(ours), bufs(theirs), cubin) is None
    case.text = read_case((ROOT / "tests/fuzz_departures/fp8_mma_private_atomic_s25000762.ptx").read_text()).text
    counter = np.zeros_like(theirs)
    counter[0] = 7
    assert known_departure(case, bufs(ours), bufs(counter), cubin) is None


# reduced campaign programs whose first finding is the departure: (file, its rule's name)
FIRST_FINDING = [
    # campaign 28 (sm_90), seed 40003608: `cvt.rm.f32.u32` of `abs.s32` of 0x80000000: ours
    # 2^31, ptxas -2^31 (test_u32_conversion_of_abs_of_int_min_is_two_to_the_31)
    ("u32_cvt_of_abs_s40003608.ptx", "u32 conversion of an abs.s32 result converts it as signed"),
    # campaign 28 (sm_90), seed 40001364: `set.eq.or.ftz.s32.f16x2` of an `ld.global.u16` that
    # ptxas merged with the b16 load beside it; the slot's last writer in program order is a
    # `mad.hi.sat.s32` a uniform branch skips: ours 0xffff0000, ptxas 0
    # (test_f16x2_or_compare_reads_the_zero_upper_half_of_a_merged_u16_load)
    ("f16x2_or_of_merged_u16_load_s40001364.ptx", "f16x2 operand from a merged 16-bit load loses its extension"),
    # campaign 28 (sm_90), seed 40001184: `max.f32` of an `add.sat.s32` result (0x7fffffff, a
    # NaN) and a register set by `mul.lo.u32 r, x, 0x0`: ptxas folds the max away and keeps
    # the NaN, ours (the manual's max) gives 0.0 (test_max_f32_of_a_saturated_mad_hi_is_the_maximum)
    ("max_f32_of_saturated_and_folded_zero_s40001184.ptx", "min/max.f32 of a saturated s32 result left out"),
    # campaign 27 (sm_86), seed 38000021: `sad.s16 d, a, a, c` of an `ld.param.s8` c: ours
    # sign-extends the byte, ptxas masks it to 0xff (test_sad_s16_adds_the_sign_extended_byte)
    ("sad_s16_of_s8_parameter_s38000021.ptx", "sad.s16 adds a signed byte parameter zero-extended"),
    # the sm_75 run of branch fuzz29, seed 39000353: `mad.wide.u16` of a `set.nan.or.f16.f16`
    # result (test_u16_multiply_of_a_half_set_result_reads_its_16_bits)
    ("u16_multiply_of_half_set_s39000353.ptx", "16-bit multiply of a half set result reads both halves"),
    # campaign 25 (sm_103): seed 36005660 (cvt.sat.f32.f16 of a saturated s16: ours 0, ptxas
    # NaN), 36005150 (sin.approx of a folded constant: ours 0, ptxas -0.709)
    ("sat_f32_of_sat_s16_s36005660.ptx", "saturating f32 convert of a saturated s16 keeps the NaN"),
    ("sin_approx_folded_s36005150.ptx", "sin/cos.approx of a constant folded exactly"),
    # campaign 25 (sm_103): seed 36003549 (cvt.rn.f32.f64 of a cnot.b64 result: ours 0, ptxas
    # 1.0), 36004785 (neg.s16 of a half set result: ours 0xc400, ptxas 0xbc00), 36004301
    # (cvt.u16.u8 of a half set result beside a division: ours 0, ptxas 1)
    ("f32_of_cnot_b64_s36003549.ptx", "f32 convert of a cnot.b64 result converts the integer"),
    ("neg_s16_of_half_set_s36004785.ptx", "neg.s16 of a half set result negated as a half"),
    ("u8_of_half_set_s36004301.ptx", "half set result as the integer 1 where the kernel calls"),
    # campaign 24 (sm_121), seed 35000635: a uniform word's high half moved down from the
    # next uniform register (test_high_half_of_a_uniform_parameter_xor_is_its_own)
    ("uniform_half_from_next_register_s35000635.ptx", "a uniform word's high half taken from the next uniform register"),
    # the same seed's whole program, reduced keeping the other form (`MOV.64 R2, UR4` of the
    # xor, then `MOV R13, UR5`): ours 0xa12ba191, ptxas 0x002b0091
    # (test_high_half_of_a_uniform_parameter_xor_read_as_a_pair_is_its_own)
    ("uniform_pair_high_half_s35000635.ptx", "a uniform word's high half taken from the next uniform register"),
    # campaign 25 (sm_103), seed 36002701: two FP8 pair converts into 16-bit registers stored
    # by one sust.v4.b16: ptxas copies the merged pair over the first (ours 0x7f7fffff, ptxas 0)
    # (test_fp8_pairs_stored_together_keep_their_own_values)
    ("fp8_pair_merge_copied_back_s36002701.ptx", "an FP8 pair merged into a 16-bit register's copy reads the other value"),
    # campaign 25 (sm_103; reduced on sm_89), seed 36000303: `set.eq.or.f16.s16` of an f16
    # set result, with a `rem.s16` after: ptxas compares it as 1 (ours 0, ptxas 0x3c00)
    # (test_s16_compare_of_an_f16_set_result_sees_0x3c00)
    ("f16_set_as_integer_s36000303.ptx", "half set result as the integer 1 where the kernel calls"),
    # campaign 25 (sm_103), seed 36001306: `cvt.s32.s8` of a `set.eq.f16.f32` result, then
    # abs.s32: ours 0 (0x3c00's low byte), ptxas 1
    ("f16_set_narrowed_s36001306.ptx", "half set result as the integer 1 where the kernel calls"),
    # campaign 25 (sm_103), seed 36001465: `abs.bf16x2` of an `add.rz.sat.f32` result: ours
    # 0x25b06f29, ptxas 0x25b0ef29 (test_abs_bf16x2_of_a_saturated_f32_clears_both_signs)
    ("abs_bf16x2_of_saturated_s36001465.ptx", "abs.bf16x2 of a saturated f32 keeps a half's sign"),
    # campaign 25 (sm_103), seed 36000184: `bfe.s32` of a u16 parameter by a per-lane
    # position: ptxas moves the per-lane shift into a uniform register (R2UR); thread 2
    # ours 0x10, ptxas 0 (test_bfe_of_a_parameter_by_a_per_lane_position_is_per_lane)
    ("bfe_shift_made_uniform_s36000184.ptx", "bfe's per-lane shift moved into a uniform register"),
    # campaign 23 (sm_89), seed 34008588: `cvt.rz.ftz.sat.f32.u32` of an `ld.param::func.s8`
    # result: ours 1.0, ptxas 0 (test_u32_conversion_of_a_sign_extended_byte_is_unsigned)
    ("u32_cvt_of_s8_parameter_s34008588.ptx", "u32 conversion of a sign-extended narrow load converts it as signed"),
    # campaign 24 (sm_121), seed 35002150: `cvt.rn.f16x2.e4m3x2` of a 16-bit element loaded
    # from a store-initialised local array: ours 0xa780d980, ptxas 0x3200
    # (test_e4m3_pair_of_a_local_array_half_is_its_value)
    ("fp8_pair_of_local_array_s35002150.ptx", "FP8 pair of a local array's 16-bit element folded to a wrong immediate"),
    # campaign 24 (sm_121), seed 35002285: `cvt.rn.f64.s16` of a `set.eq.xor.f16.b16` result in
    # a kernel with `sqrt.rp.f64` (a slow-path call): ours 15360.0, ptxas 1.0
    # (test_s64_of_a_half_set_result_is_its_bits_when_the_kernel_calls)
    ("f64_of_half_set_with_sqrt_s35002285.ptx", "half set result as the integer 1 where the kernel calls"),
    # campaign 23 (sm_89), seed 34006593: `cvt.rm.sat.f32.u8` of `shr.b16 h1, h0, cnot(r)`:
    # ours 1.0, ptxas 0 (test_16bit_left_shift_by_a_cnot_result_shifts_by_it)
    ("cvt_of_shr16_by_cnot_s34006593.ptx", "16-bit shift by a cnot result does not shift by it (downstream)"),
    # campaign 24 (sm_121), seed 35001701: an e5m2x2 pair and a byte stored as st.v2.u16
    # {byte, pair}: ptxas stores one half of its F2FP MERGE_C register twice; the reload's
    # e4m3x2 conversion differs (test_half_unpacked_beside_an_fp8_pair_is_its_own)
    ("v2_u16_beside_fp8_pair_s35001701.ptx", "half beside an FP8 pair merged by F2FP is read from the wrong half"),
    # campaign 23 (sm_89), seed 34003432: a shr.b16 result packed beside an e5m2x2 pair by
    # mov.b64 and unpacked again: ours 0x0000 (the shift), ptxas 0x9952 (the pair)
    # (test_half_unpacked_beside_an_fp8_pair_is_its_own)
    ("half_beside_fp8_pair_s34003432.ptx", "half beside an FP8 pair merged by F2FP is read from the wrong half"),
    # campaign 23 (sm_89), seed 34003205: `set.ne.u32.f32` of a folded 0.0 and a
    # `set.eq.ftz.s32.f32` result (-1), added with carry: ours 0xffffffff, ptxas 0xfffffffe
    # (test_f32_ne_of_an_integer_set_result_is_ordered)
    ("f32_ne_of_integer_set_s34003205.ptx", "f32 ne of an integer set result compares the integers"),
    # campaign 14 (sm_120), seed 26000131: `neg.ftz.f16` of the canonicalised `neg.f16` of a
    # `cnot.b16` result, ours 0x0000, ptxas 0x8000 (test_neg_f16_of_a_cnot_result_flips_the_sign_bit)
    ("neg_f16_of_cnot_s26000131.ptx", "neg.f16 of a cnot.b16 result as integer negation"),
    # campaign 15 (sm_75), seed 27001629: `shl.b64 %d1, %d0, 200` xor-reduced into the thread's
    # private atomic word: ours adds 0 (the manual), ptxas the unshifted value
    # (test_64bit_left_shift_by_an_immediate_of_64_or_more_is_zero)
    ("shl64_by_imm_s27001629.ptx", "shl.b64 by an immediate of 64 or more leaves the value unshifted"),
    # campaign 16 (sm_100), seed 28001354: `set.eq.ftz.s32.f16x2` of an `ld.global.s16` into
    # a 32-bit register that ptxas merged with the s16 load beside it: ours 0x00000000,
    # ptxas 0xffff0000 (test_f16x2_compare_reads_the_sign_extended_upper_half_of_an_s16_load)
    ("f16x2_of_merged_s16_load_s28001354.ptx", "f16x2 operand from a merged 16-bit load loses its extension"),
    # seed 28001234: `neg.f32` of `set.nan.or.u32.f64`'s all ones, then testp/selp: ours
    # 0x7fffffff, ptxas 1 (test_neg_f32_of_an_integer_set_result_is_a_nan)
    ("neg_f32_of_set_s28001234.ptx", "neg.f32 of a set result folded into the set's select"),
    # seed 28001020: m8n8k4's a1 from an `ld.global.u16` merged with the next half's load,
    # seen in the thread's private atomic word (test_m8n8k4_reads_the_zero_upper_half_of_a_u16_load)
    ("m8n8k4_of_merged_u16_load_s28001020.ptx", "mma fragment from a merged 16-bit load loses its extension"),
    # held-out sm_120a campaign (branch fuzzfix33), seed 45200124: an m16n8k8 f16 mma with B =
    # the low half of a mov.b64 unpack and C[0] = its high half; ptxas copies the low half
    # (test_mma_c_fragment_of_an_unpacked_high_half)
    ("mma_c_of_unpacked_high_half_s45200124.ptx", "mma C fragment from an unpacked high half takes the low half"),
    # branch fuzz35's corner group, seed 1012 (sm_100a, `--features int32,corner,fp6`): a ue8m0
    # pair packed under the zero-extended e2m1 byte by `mov.b32 {pair, h}`: ours 0x0010 (the
    # byte), ptxas 0x01ff (the pair) (test_narrow_pair_packed_under_a_16bit_value_keeps_that_value)
    ("narrow_pair_under_half_s1012.ptx",
     "a narrow pair merged under a 16-bit value leaves that value's register holding the pack"),
    # branch fuzz35's sm_75 tuning run, seed 47300172: `cvt.u16.u8` of a true
    # `set.eq.or.f32.b16` beside a `.func` with `rcp.rm.f64`: ours 0, ptxas 1
    # (test_byte_of_an_f32_set_result_is_zero_when_the_kernel_has_a_sqrt)
    ("f32_set_byte_s47300172.ptx", "byte of an f32 set result is the integer 1's where the kernel calls"),
]


@pytest.mark.parametrize("name, rule", FIRST_FINDING)
def test_reduced_program_is_first_found_ptxas_wrong(name, rule):
    out = run_case(read_case((ROOT / "tests/fuzz_departures" / name).read_text()))
    assert out.cls == "ptxas_wrong", (out.sig, out.detail)
    assert out.findings[0] == ["ptxas_wrong", f"ptxas_wrong: {rule}"]


def test_64bit_shift_by_63_or_into_another_register_is_not_the_departure():
    """Near misses of the private-word rule: a shift by 63 (in range), and a reduction of a
    register other than the shifted one."""
    case = read_case((ROOT / "tests/fuzz_departures/shl64_by_imm_s27001629.ptx").read_text())
    listing = lambda: ""
    assert recognise("private atomic word", 1, 2, 64, case.text, listing) is not None
    assert recognise("private atomic word", 1, 2, 64, case.text.replace(", 200;", ", 63;"), listing) is None
    other = case.text.replace("red.global.xor.b64 [%td0], %d1;", "red.global.xor.b64 [%td0], %d0;")
    assert other != case.text
    assert recognise("private atomic word", 1, 2, 64, other, listing) is None


def test_merged_narrow_load_needs_ptxas_to_load_the_word_whole():
    """The merged-load rules' evidence: campaign 16's 28001020 (sm_100) has `ld.global.u16
    %r3, [+12]` beside `ld.global.b16 %h0, [+14]` and ptxas's `LDG.E R0, [R8.64+0xc]`. Moved
    apart (%h0 from +40), ptxas loads %r3 alone (`LDG.E.U16`) and computes the manual's
    value: not the departure; a 16-bit register (%h0) is never one."""
    case = read_case((ROOT / "tests/fuzz_departures/m8n8k4_of_merged_u16_load_s28001020.ptx").read_text())
    listing = oracle.cuobjdump_sass(oracle.ptxas(case.text, "sm_100").output)
    assert departures.merged_narrow_loads(case.text, listing) == {"%r3"}
    assert departures.merged_load_read_by_mma(case.text, listing)
    apart = case.text.replace("ld.global.b16 %h0, [%g_inp+14];", "ld.global.b16 %h0, [%g_inp+40];")
    assert apart != case.text
    apart_listing = oracle.cuobjdump_sass(oracle.ptxas(apart, "sm_100").output)
    assert departures.merged_narrow_loads(apart, apart_listing) == set()
    assert recognise("private atomic word", 1, 2, 64, apart, lambda: apart_listing) is None
    # the f16x2 rule: s16 loads merged into `LDG.E R0, [+0xc]`; not when the set reads another register
    case = read_case((ROOT / "tests/fuzz_departures/f16x2_of_merged_s16_load_s28001354.ptx").read_text())
    listing = oracle.cuobjdump_sass(oracle.ptxas(case.text, "sm_100").output)
    assert departures.merged_narrow_loads(case.text, listing) == {"%r3"}
    other = case.text.replace("set.eq.ftz.s32.f16x2 %r1, %r5, %r3;", "set.eq.ftz.s32.f16x2 %r1, %r5, %r6;")
    other = other.replace("set.eq.u32.f16x2 %r2, %r3, %r0;", "set.eq.u32.f16x2 %r2, %r6, %r0;")
    assert other != case.text
    assert not departures.merged_load_read_as_f16x2(other, listing)


def test_reduced_program_with_a_minmax_of_a_saturated_result_left_out_is_ptxas_wrong():
    """Campaign 19 (sm_90), seed 30001065 reduced: `max.f32` of a `mad.hi.sat.s32` result and
    -1.0, then testp/selp and a mul: ptxas's listing has no FMNMX of an immediate, and the
    mul is the first difference (test_max_f32_of_a_saturated_mad_hi_is_the_maximum). With the
    max's immediate made a register operand the rule does not apply."""
    path = ROOT / "tests/fuzz_departures/max_f32_of_saturated_mad_hi_s30001065.ptx"
    case = read_case(path.read_text())
    out = run_case(case)
    assert out.cls == "ptxas_wrong", (out.sig, out.detail)
    assert out.findings[-1] == ["ptxas_wrong", "ptxas_wrong: min/max.f32 of a saturated s32 result left out"]
    assert not departures.minmax_of_saturated_left_out(case.text.replace("0fBF800000", "%r0"), "")

def test_reduced_program_with_vabsdiff4_of_a_uniform_operand_is_ptxas_wrong():
    """Campaign 18 (sm_89), seed 29102974 reduced (test_vabsdiff4_of_a_uniform_operand_...);
    a listing whose VABSDIFF4 reads a register the previous instruction writes, with no
    uniform register of that number, is not it. The same read of R8 one cycle after its
    IMAD is also a hazard in ptxas's cubin: the departure's own read, so the departure ranks
    first and the hazard is listed after it."""
    path = ROOT / "tests/fuzz_departures/vabsdiff4_uniform_operand_s29102974.ptx"
    out = run_case(read_case(path.read_text()))
    assert out.cls == "ptxas_wrong", (out.sig, out.findings)
    assert out.sig == "ptxas_wrong: vabsdiff4 reads a uniform register's index as a register"
    assert [c for c, _ in out.findings] == ["ptxas_wrong", "emu_fail"], out.findings
    assert "VABSDIFF4 needs" in out.findings[1][1]
    line = "        /*{:04x}*/  {} ;\n"
    fn = lambda *ins: "".join(line.format(16 * i, t) for i, t in enumerate(ins))
    bad = fn("ULOP3.LUT UR8, UR8, 0xffff, URZ, 0xc0, !UPT", "IMAD.MOV.U32 R8, RZ, RZ, 0x120",
             "VABSDIFF4.ACC R11, R27, R8, R29", "EXIT")
    assert departures.video_reads_a_uniform_index_as_a_register(bad)
    assert not departures.video_reads_a_uniform_index_as_a_register(bad.replace("UR8, UR8", "UR9, UR8"))


def test_whole_program_with_vabsdiff4_of_a_uniform_operand_is_ptxas_wrong():
    """Campaign 18's 29102974 itself (sm_89), a mismatch before: `vabsdiff4.u32.s32.s32.add
    %r18, %r16, %r17, %r11` with a = 0x786d (bytes 109, 120, 0, 0), b = p_u2 = 0x66ef (signed
    bytes -17, 102, 0, 0), c = 0x1a: 126 + 18 + 26 = 0xaa by the manual, ours. ptxas keeps
    b in UR21 (`ULOP3.LUT UR21, UR19, 0xffff`) and reads R21, the high half of an address
    (`IMAD.WIDE.U32 R20, ...`). A VABSDIFF whose Rn was read since its write (R9 of S2R,
    read by IADD3) after a later `UMOV UR9` is not it."""
    path = ROOT / "tests/fuzz_departures/vabsdiff4_uniform_operand_s29102974_whole.ptx"
    out = run_case(read_case(path.read_text()))
    assert out.cls == "ptxas_wrong", (out.sig, out.detail)
    assert "%r18" in out.detail and "ours 0x000000aa" in out.detail, out.detail
    line = "        /*{:04x}*/  {} ;\n"
    fn = lambda *ins: "".join(line.format(16 * i, t) for i, t in enumerate(ins))
    late = fn("IMAD.WIDE.U32 R20, R4, R19, c[0x0][0x160]", "ULOP3.LUT UR21, UR19, 0xffff, URZ, 0xc0, !UPT",
              "VABSDIFF4.ACC R46, R47, R21, R43", "EXIT")
    assert departures.video_uniform_index_reads(late) == {("", 0x20)}
    assert not departures.video_uniform_index_reads(late.replace("ULOP3.LUT UR21, UR19", "IADD3 R3, R21"))
    read_before = fn("S2R R9, SR_CTAID.X", "IADD3 R3, R9, UR4, RZ", "UMOV UR9, 0x1",
                     "VABSDIFF.U32 R51, R51, R51, R9", "EXIT")
    assert not departures.video_uniform_index_reads(read_before)
    assert departures.video_uniform_index_reads(read_before.replace("IADD3 R3, R9", "IADD3 R3, R8"))

def test_a_hazard_off_the_departures_read_stays_an_emu_fail():
    """Only a hazard on the read the departure names ranks after it: with a second hazard
    at another instruction of ptxas's cubin (here in a callee placed at 0x200), that one is
    an emu_fail of its own and outranks the departure; with none explained, nothing moves."""
    from types import SimpleNamespace

    from ptx2sass.emu.hazards import Hazard
    from ptx2sass.fuzz.runner import _finish, _hazards_of_the_departure, _their_hazard
    known = next(d for d in DEPARTURES if d.reads is not None)
    listing = ("\t\tFunction : k\n        /*0000*/  ULOP3.LUT UR8, UR8, 0xffff, URZ, 0xc0, !UPT ;\n"
               "        /*0010*/  IMAD.MOV.U32 R8, RZ, RZ, 0x120 ;\n"
               "        /*0020*/  VABSDIFF4.ACC R11, R27, R8, R29 ;\n\t\tFunction : f\n"
               "        /*0020*/  VABSDIFF4.ACC R11, R27, R8, R29 ;\n")
    assert known.reads(listing) == {("k", 0x20)}
    program = SimpleNamespace(code_bases={".text.k": 0, ".text.f": 0x200})
    on_read = Hazard("k", 0x20, "reads R8 1 cycles after IMAD at 0x10 issued; VABSDIFF4 needs 4")
    elsewhere = Hazard("k", 0x220, "reads R3 1 cycles after IMAD at 0x210 issued; IADD3 needs 4")
    dep = ("ptxas_wrong", f"ptxas_wrong: {known.name}")
    for hazards, cls, order in (([on_read], "ptxas_wrong", [dep, _their_hazard(on_read)]),
                                ([on_read, elsewhere], "emu_fail",
                                 [dep, _their_hazard(elsewhere), _their_hazard(on_read)]),
                                ([elsewhere], "emu_fail", [dep, _their_hazard(elsewhere)])):
        findings = [dep, _their_hazard(hazards[0])]
        after = _hazards_of_the_departure(known, lambda: listing, program, hazards, findings)
        out = _finish(findings, "", {}, {}, {}, after)
        assert out.cls == cls and out.findings == [list(f) for f in order], (hazards, out.findings)


def test_reduced_program_whose_contended_counter_differs_on_an_unwritten_predicate_is_ptxas_wrong():
    """Campaign 23 (sm_89), seed 34001441 reduced: ptxas guards the `atom.global.dec.u32` of a
    uniform branch's else side with `@!P1 BRA`, P1 written by nothing before it (the branch
    reads P0), so its cubin skips the decrements: the first difference is a contended counter,
    which the runner now also checks against the pinned departures."""
    path = ROOT / "tests/fuzz_departures/contended_dec_on_unwritten_predicate_s34001441.ptx"
    out = run_case(read_case(path.read_text()))
    assert out.cls == "ptxas_wrong", (out.sig, out.detail)
    assert out.findings[-1] == ["ptxas_wrong", "ptxas_wrong: ptxas reads a predicate it never writes"]


@pytest.mark.parametrize("name, sig", [
    ("half_set_as_integer_one_s33002318.ptx", "half set result as the integer 1 where the kernel calls"),
    ("u16_set_of_half_set_into_mma_sp_s33003906.ptx", "16-bit integer set of a half set result reads both halves")])
def test_campaign22_programs_are_ptxas_wrong(name, sig):
    """Campaign 22 (sm_110): 33002318 reduced (cvt.s64.s16 of a set.geu.xor.f16.f32 result with
    a div.rz.ftz.f32 in the kernel), 33003906 whole (set.gt.s32.u16 of a half set result, read
    by an mma.sp as a source)."""
    out = run_case(read_case((ROOT / "tests/fuzz_departures" / name).read_text()))
    assert out.cls == "ptxas_wrong", (out.sig, out.detail)
    assert out.findings[-1] == ["ptxas_wrong", f"ptxas_wrong: {sig}"]


@pytest.mark.parametrize("name, sig", [
    ("f32_set_as_integer_one_s43300190.ptx", "64-bit convert of an f32 set result converts the integer 1"),
    ("sad_s16_of_half_set_s43200298.ptx", "sad.s16 of a half set result as the integer 1 where the kernel calls")])
def test_fuzz31_float_set_programs_are_ptxas_wrong(name, sig):
    """Branch fuzz31's held-out runs, reduced: 43300190 on sm_75 (cvt.s64.u32 of a
    set.ls.and.f32.u16 result after a loop with rem.s32) and 43200298 on sm_100 (sad.s16 of a
    set.gt.f16.s16 result beside a sqrt.rm.f64); before the rules both were mismatches."""
    out = run_case(read_case((ROOT / "tests/fuzz_departures" / name).read_text()))
    assert out.cls == "ptxas_wrong", (out.sig, out.detail)
    assert out.findings[-1] == ["ptxas_wrong", f"ptxas_wrong: {sig}"]


def test_rule_keys_reach_a_writer_that_a_branch_may_skip():
    """`last_writers`: the slot's key names the last writer in program order (campaign 28's
    40001364: `mad.hi.sat.s32` under `@%p1 bra.uni`), but the set before it also reaches the
    end, so the f16x2 rule is tried on it. With the mad unconditional (its branch removed),
    only the mad reaches the end and the rule does not apply; a guarded write does not hide
    the one before it, an unguarded one at the outer level does."""
    case = read_case((ROOT / "tests/fuzz_departures/f16x2_or_of_merged_u16_load_s40001364.ptx").read_text())
    listing = oracle.cuobjdump_sass(oracle.ptxas(case.text, "sm_90").output)
    assert departures.last_writers(case.text, "%r4") == ("set.eq.or.ftz.s32.f16x2", "mad.hi.sat.s32")
    assert departures.last_writers(case.text, "%r3") == ("ld.global.f32",)
    rule = "f16x2 operand from a merged 16-bit load loses its extension"
    got = recognise("mad.hi.sat.s32", 0xFFFF0000, 0, 32, case.text, lambda: listing, reg="%r4")
    assert got is not None and got.name == rule
    assert recognise("mad.hi.sat.s32", 0xFFFF0000, 0, 32, case.text, lambda: listing) is None
    straight = case.text.replace("    @%p1 bra.uni $L2_endif;\n        mad.hi.sat.s32", "    mad.hi.sat.s32")
    assert straight != case.text
    assert departures.last_writers(straight, "%r4") == ("mad.hi.sat.s32",)
    assert recognise("mad.hi.sat.s32", 0xFFFF0000, 0, 32, straight, lambda: listing, reg="%r4") is None
    guarded = straight.replace("    mad.hi.sat.s32", "    @%p1 mad.hi.sat.s32")
    assert departures.last_writers(guarded, "%r4") == ("set.eq.or.ftz.s32.f16x2", "mad.hi.sat.s32")
