"""Hand-written PTX that ptxas must reject (or, for a few edge cases, accept), shared by the
frontend tests. The expected verdict and lines are never written here: they come from the
pinned ptxas at test time (`ptxas_diagnostics`)."""
from __future__ import annotations

import re

HEADER = ".version 8.5\n.target sm_89\n.address_size 64\n"
DECLS = (".reg .b32 r<4>;\n.reg .pred p<3>;\n.reg .f32 f<3>;\n.reg .b64 rd<3>;\n"
         ".reg .f16 h<3>;\n.reg .b16 rs<3>;\n.reg .v2 .u32 v2;\n.shared .align 4 .b8 smem[64];\n")


def kernel(body: str, header: str = HEADER) -> str:
    return (header + ".visible .entry k(.param .u64 p)\n{\n" + DECLS + body + "\nret;\n}\n")


CASES: dict[str, str] = {
    # names
    "undeclared_source": kernel("add.s32 r1, r2, q;"),
    "undeclared_two": kernel("add.s32 r1, r2, q;\nadd.s32 r1, r2, z;"),
    "redeclared_register": kernel(".reg .b32 r1;"),
    "redeclared_plain": kernel(".reg .b32 x;\n.reg .b32 x;"),
    "undefined_label": kernel("bra NOPE;"),
    "duplicate_label": kernel("L1:\nL1:\n"),
    "register_as_label": kernel("bra r1;"),
    "range_out_of_bounds": kernel("mov.u32 r4, 1;"),
    "unknown_special_register": kernel("mov.u32 r1, %foo;"),
    "guard_not_predicate": kernel("@r1 bra L2;\nL2:"),
    "guard_undeclared": kernel("@q bra L2;\nL2:"),
    # instructions and modifiers
    "unknown_instruction": kernel("frob.s32 r1, r2, r3;"),
    "unknown_modifier": kernel("add.foo.s32 r1, r2, r3;"),
    "illegal_modifier": kernel("add.ftz.s32 r1, r2, r3;"),
    "illegal_rounding": kernel("add.rn.s32 r1, r2, r3;"),
    "missing_type": kernel("add r1, r2, r3;"),
    "two_types": kernel("add.s32.s32 r1, r2, r3;"),
    "mul_without_mode": kernel("mul.u32 r1, r2, r3;"),
    "setp_without_comparison": kernel("setp.s32 p1, r1, r2;"),
    "cvt_missing_rounding": kernel("cvt.f32.s32 f1, r1;"),
    "cvt_needless_rounding": kernel("cvt.rn.s32.s32 r1, r1;"),
    "cvt_float_to_int_no_rounding": kernel("cvt.s32.f32 r1, f1;"),
    "vote_without_sync": kernel("vote.any.pred p1, p2;"),
    "redux_old_target": kernel("redux.sync.add.u32 r1, r2, 0xffffffff;",
                               ".version 8.5\n.target sm_75\n.address_size 64\n"),
    # operands
    "too_few_operands": kernel("add.s32 r1, r2;"),
    "too_many_operands": kernel("add.s32 r1, r2, r3, r3;"),
    "wrong_register_type": kernel("add.s32 r1, r2, f1;"),
    "wrong_register_size": kernel("add.u32 r1, r2, rd1;"),
    "predicate_in_arithmetic": kernel("add.s32 p1, r2, r3;"),
    "immediate_destination": kernel("add.s32 1, r2, r3;"),
    "float_immediate_int_op": kernel("add.u32 r1, r2, 1.0;"),
    "int_immediate_float_op": kernel("add.f32 f1, f2, 1;"),
    "mov_size_mismatch": kernel("mov.u32 r1, rd1;"),
    "setp_integer_destination": kernel("setp.eq.s32 r1, r2, r3;"),
    "shift_amount_64bit": kernel("shl.b64 rd1, rd1, rd2;"),
    "symbol_as_add_source": kernel("add.u64 rd1, rd1, p;"),
    "ld_wrong_space": kernel("ld.global.u32 r1, [p];"),
    "ld_generic_param": kernel("ld.u32 r1, [p];"),
    "ld_vector_into_scalar": kernel("ld.global.v2.u32 r1, [rd1];"),
    "ld_into_immediate": kernel("ld.global.u32 5, [rd1];"),
    "st_without_address": kernel("st.global.u32 rd1, r1;"),
    "ok_ld_float_into_bit_register": kernel("ld.global.f32 r1, [rd1];"),
    "ld_u32_into_float_register": kernel("ld.global.u32 f1, [rd1];"),
    "label_as_source": kernel("L1:\nadd.u32 r1, r2, L1;"),
    "constant_overflow": kernel("add.s32 r1, r2, 99999999999999999999999;"),
    "vector8_needs_sm100": kernel(".reg .b32 v<8>;\n"
                                  "ld.global.v8.u32 {v0,v1,v2,v3,v4,v5,v6,v7}, [rd1];"),
    # syntax
    "double_comma": kernel("add.s32 r1, r2,, r3;"),
    "missing_semicolon": kernel("add.s32 r1, r2, r3\nadd.s32 r1, r2, r3;"),
    "control_characters": kernel("\x01\x02\x03"),
    "unterminated_body": kernel("add.s32 r1, r2, r3;").rsplit("}", 1)[0],
    "unknown_directive": kernel(".frob 1;"),
    "register_without_type": kernel(".reg r9;"),
    "entry_noreturn": HEADER + ".visible .entry k() .noreturn\n{\nret;\n}\n",
    # header
    "missing_version": ".target sm_89\n.visible .entry k()\n{\nret;\n}\n",
    "missing_target": ".version 8.5\n.visible .entry k()\n{\nret;\n}\n",
    "unsupported_version": kernel("", ".version 9.9\n.target sm_89\n.address_size 64\n"),
    "unsupported_target": kernel("", ".version 8.5\n.target sm_999\n.address_size 64\n"),
    "target_above_arch": kernel("", ".version 8.5\n.target sm_90\n.address_size 64\n"),
    "bad_address_size": ".version 8.5\n.target sm_89\n.address_size 48\n",
    "alignment_not_power_of_two": HEADER + ".global .align 3 .u32 g;\n",
    # accepted edge cases (ptxas takes these; we must too)
    "ok_relaxed_ld_wider": kernel("ld.global.u8 r1, [rd1];\nld.global.f32 rd1, [rd2];"),
    "ok_negative_offset": kernel("ld.global.u32 r1, [rd1+-4];\nst.shared.u32 [smem+8], r1;"),
    "ok_modifier_order_free": kernel("add.f32.rn f1, f1, f2;"),
    "ok_pack_unpack": kernel("mov.b64 {r1, r2}, rd1;\nmov.b32 r1, {rs1, rs2};"),
    "ok_vector_register": kernel("mov.v2.u32 v2, {r1, r2};\nmov.b64 rd1, v2;\n"
                                 "add.u32 r1, v2.x, v2.y;"),
    "ok_setp_pair": kernel("setp.lt.s32 p1|p2, r1, r2;\n@!p2 bra L;\nL:"),
    "ok_selp_hex_float": kernel("selp.b32 r1, 0f3F800000, 0f00000000, p1;"),
    "ok_mad_wide": kernel("mad.wide.u32 rd1, r1, r2, rd2;\nmul.wide.s32 rd1, r1, 4;"),
    "ok_warp_size": kernel("mov.u32 r1, WARP_SZ;\nmov.u32 r2, %tid.x;"),
    "ok_nested_scopes": kernel("{\n.reg .pred %q;\nsetp.eq.u32 %q, r1, 0;\n{\n.reg .b32 %q2;\n"
                               "mov.u32 %q2, 1;\n}\n}\n{\n.reg .pred %q;\n}"),
    "ok_call_prototype": HEADER + (
        ".func (.param .b32 rv) f(.param .b32 a)\n{\n.reg .b32 t;\nld.param.b32 t, [a];\n"
        "st.param.b32 [rv], t;\nret;\n}\n.visible .entry k(.param .u64 p)\n{\n"
        ".reg .b64 fp;\n.reg .b32 x;\nmov.u64 fp, f;\n{\n.param .b32 a0;\n.param .b32 r0;\n"
        "st.param.b32 [a0], 1;\nproto: .callprototype (.param .b32 _) _ (.param .b32 _);\n"
        "call (r0), fp, (a0), proto;\nld.param.b32 x, [r0];\n}\nret;\n}\n"),
    "ok_brx_idx": kernel("ts: .branchtargets A, B;\nbrx.idx r1, ts;\nA:\nbra.uni B;\nB:"),
    "ok_debug_sections": HEADER + (
        ".file 1 \"k.cu\"\n.visible .entry k()\n{\n.loc 1 3 1\nret;\n"
        ".loc 1 4 2, function_name $L__info, inlined_at 1 3 1\n}\n"
        ".section .debug_str\n{\n$L__info:\n.b8 107,0\n}\n"
        ".section .debug_info\n{\n.b32 10\n.b8 2\n.b32 .debug_abbrev\n.b64 $L__info\n}\n"),
}


_PTXAS_LINE = re.compile(r"^ptxas (?:(?P<file>.+?), line (?P<line>\d+); )?"
                         r"(?P<sev>error|fatal|warning)\s*: (?P<msg>.*)$")


def ptxas_diagnostics(stderr: str) -> list[tuple[int | None, str, str]]:
    """(line, severity, message) for each ptxas diagnostic, leaving out its closing
    'Ptx assembly aborted due to errors'."""
    out = []
    for text in stderr.splitlines():
        m = _PTXAS_LINE.match(text.strip())
        if m and "Ptx assembly aborted" not in m.group("msg"):
            line = int(m.group("line")) if m.group("line") else None
            out.append((line, m.group("sev"), m.group("msg")))
    return out
