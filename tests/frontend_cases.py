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


FUNC_F = HEADER + ".func (.param .b32 rv) f(.param .b32 a, .param .b32 b)\n{\nret;\n}\n"


def kernel_calling(body: str) -> str:
    return (HEADER + ".visible .entry k(.param .u64 pp)\n{\n.reg .b32 r<4>;\n"
            ".param .b32 a0;\n.param .b32 a1;\n.param .b32 rr;\n" + body + "\nret;\n}\n")


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
    "version_too_old_for_target": kernel("", ".version 7.7\n.target sm_89\n.address_size 64\n"),
    "address_size_before_2_3": ".version 2.2\n.target sm_20\n.address_size 64\n",
    "bad_address_size": ".version 8.5\n.target sm_89\n.address_size 48\n",
    "alignment_not_power_of_two": HEADER + ".global .align 3 .u32 g;\n",
    # functions, calls, directives, declarations
    "call_wrong_argument_count": FUNC_F + kernel_calling("call (rr), f, (a0);")[len(HEADER):],
    "call_without_result": FUNC_F + kernel_calling("call f, (a0, a1);")[len(HEADER):],
    "call_undeclared": FUNC_F + kernel_calling("call (rr), g, (a0, a1);")[len(HEADER):],
    "call_label": FUNC_F + kernel_calling("L:\ncall L;")[len(HEADER):],
    "call_entry": HEADER + ".entry e2();\n" + kernel_calling("call e2;")[len(HEADER):],
    "called_extern_unresolved": FUNC_F + ".extern .func g(.param .b32 x);\n"
                                + kernel_calling("call g, (a0);")[len(HEADER):],
    "declared_func_never_defined": HEADER + ".func f() .noreturn;\n",
    "perf_directive_on_declaration": HEADER + ".visible .entry k() .maxnreg 32;\n",
    "maxntid_zero": HEADER + ".visible .entry k()\n.maxntid 0\n\n\n.minnctapersm 1\n{\nret;\n}\n",
    "maxntid_four_values": HEADER + ".visible .entry k()\n.maxntid 1,2,3,4\n{\nret;\n}\n",
    "maxntid_and_reqntid": HEADER + ".visible .entry k()\n.maxntid 128\n.reqntid 64\n{\n"
                           ".reg .b32 r;\n\nmov.b32 r, 1;\n\n}\n\n\n",
    "duplicate_entry": HEADER + ".visible .entry k()\n{\nret;\n}\n.visible .entry k()\n{\nret;\n}\n",
    "duplicate_global": HEADER + ".global .u32 g;\n.global .u32 g;\n",
    "param_redeclared_in_body": HEADER + ".visible .entry k(.param .u64 p)\n{\n.reg .b64 p;\nret;\n}\n",
    "entry_register_parameter": HEADER + ".visible .entry k(.reg .b32 x)\n{\nret;\n}\n",
    "module_register": HEADER + ".reg .b32 x;\n",
    "shared_initializer": kernel(".shared .u32 s9 = 5;"),
    "register_initializer": kernel(".reg .u32 zz = 5;"),
    "initializer_too_long": HEADER + ".global .u32 g[2][2] = {{1,2},{3,4,5}};\n",
    "initializer_unknown_symbol": HEADER + ".global .u64 g = nope;\n",
    "initializer_unknown_generic": HEADER + ".global .u64 g = generic(nope);\n",
    "incomplete_global_array": HEADER + ".global .u32 g[];\n",
    "inconsistent_prototype_types": HEADER + ".func f(.param .b32 a);\n.func f(.param .b64 a)\n{\nret;\n}\n",
    "inconsistent_prototype_count": HEADER + ".func f(.param .b32 a);\n"
                                    ".func f(.param .b32 a, .param .b32 b)\n{\nret;\n}\n",
    "label_of_inner_block_used_outside": kernel("bra L;\n{\nL:\n}"),
    "register_of_inner_block_used_outside": kernel("{\n.reg .b32 z;\n}\nmov.b32 z, 1;"),
    "declarable_only_as_instruction_type": kernel(".reg .e4m3 e;"),
    "bf16_register": kernel(".reg .bf16 b;"),
    "two_types_in_declaration": kernel(".reg .u64 .u64 x;"),
    # operand details (some accepted, some not: the ok_ prefix records ptxas's verdict)
    'operand_mov_u32_r1_tid': kernel('mov.u32 r1, %tid;'),
    'ok_operand_mov_u32_r1_tid_w': kernel('mov.u32 r1, %tid.w;'),
    'ok_operand_ld_global_u32_r1_rs1': kernel('ld.global.u32 r1, [rs1];'),
    'operand_st_global_u32_rd1_p1': kernel('st.global.u32 [rd1], p1;'),
    'operand_setp_eq_s32_p1_r1_1_0': kernel('setp.eq.s32 p1, r1, 1.0;'),
    'operand_add_u32_r1_r2_clock64': kernel('add.u32 r1, r2, %clock64;'),
    'ok_operand_reg_b32_q_0': kernel('.reg .b32 %q<0>;'),
    'operand_shared_align_0_b8_x_4': kernel('.shared .align 0 .b8 x[4];'),
    'ok_operand_ld_global_v4_u32_r1_r2_r3_rd1': kernel('ld.global.v4.u32 {r1,r2,r3,_}, [rd1];'),
    'ok_operand_cvt_u32_u32_r1_r2': kernel('cvt.u32.u32 r1, r2;'),
    'operand_and_b32_r1_r2_1_0': kernel('and.b32 r1, r2, 1.0;'),
    'operand_mov_u32_r1_laneid_x': kernel('mov.u32 r1, %laneid.x;'),
    'operand_mov_u16_rs1_clock64': kernel('mov.u16 rs1, %clock64;'),
    'operand_ld_global_u32_r1_f1': kernel('ld.global.u32 r1, [f1];'),
    'operand_st_global_u32_rd1_4_0_r1': kernel('st.global.u32 [rd1+4.0], r1;'),
    'operand_add_u32_r1_r2_smem': kernel('add.u32 r1, r2, smem;'),
    'operand_ld_shared_u32_r1_smem_r1': kernel('ld.shared.u32 r1, [smem+r1];'),
    'operand_mov_u32_r1_v2': kernel('mov.u32 r1, v2;'),
    'operand_mov_v2_u32_v2_r1_r2_r3': kernel('mov.v2.u32 v2, {r1, r2, r3};'),
    'ok_operand_st_global_v2_u32_rd1_v2': kernel('st.global.v2.u32 [rd1], v2;'),
    'operand_mov_u64_rd1_ctaid_x': kernel('mov.u64 rd1, %ctaid.x;'),
    'operand_bra_foo_l': kernel('bra.uni L;\nL:\nbra.foo L;'),
    'ok_operand_selp_u32_r1_r2_r3_p1': kernel('selp.u32 r1, r2, r3, !p1;'),
    'ok_operand_not_pred_p1_p2': kernel('not.pred p1, !p2;'),
    'ok_operand_mov_pred_p1_1': kernel('mov.pred p1, 1;'),
    'operand_mov_pred_p1_r1': kernel('mov.pred p1, r1;'),
    'ok_operand_setp_eq_u32_p1_r1_r2': kernel('setp.eq.u32 p1|_, r1, r2;'),
    'ok_operand_shl_b32_r1_r2_33': kernel('shl.b32 r1, r2, 33;'),
    'operand_mad_lo_s32_r1_r2_r3': kernel('mad.lo.s32 r1, r2, r3;'),
    'operand_ld_global_b128_rd1_rd1': kernel('ld.global.b128 rd1, [rd1];'),
    'operand_mov_b32_r1_0d3ff0000000000000': kernel('mov.b32 r1, 0d3FF0000000000000;'),
    'ok_operand_mov_f32_f1_0d3ff0000000000000': kernel('mov.f32 f1, 0d3FF0000000000000;'),
    'ok_operand_mov_f64_rd1_0f3f800000': kernel('mov.f64 rd1, 0f3F800000;'),
    'ok_operand_add_f64_rd1_rd1_0f3f800000': kernel('add.f64 rd1, rd1, 0f3F800000;'),
    'ok_operand_add_f32_f1_f1_1_5': kernel('add.f32 f1, f1, 1.5;'),
    'operand_exit_uni': kernel('exit.uni;'),
    "duplicate_file_index": HEADER + ".file 1 \"a.cu\"\n.file 1 \"b.cu\"\n.visible .entry k()\n{\nret;\n}\n",
    "inlined_at_unknown_location": HEADER + ".file 1 \"a.cu\"\n.visible .entry k()\n{\n"
                                   ".loc 1 2 3, function_name f, inlined_at 1 1 1\nret;\n}\n",
    "debug_target_without_sections": ".version 8.5\n.target sm_89, debug\n.address_size 64\n"
                                     ".visible .entry k()\n{\nret;\n}\n",
    "label_of_other_function": HEADER + ".func f()\n{\nL:\nret;\n}\n.visible .entry k()\n{\n"
                                "bra L;\nret;\n}\n",
    # accepted edge cases (ptxas takes these; we must too)
    "ok_loc_without_file_warns": HEADER + ".visible .entry k()\n{\n.loc 5 1 1\nret;\n}\n",
    "ok_oldest_version_for_target": kernel("", ".version 7.8\n.target sm_89\n.address_size 64\n"),
    "ok_minnctapersm_alone_warns": HEADER + ".visible .entry k()\n.minnctapersm 2\n{\nret;\n}\n",
    "ok_same_label_in_nested_blocks": kernel("L:\n{\nL:\n}"),
    "ok_call": FUNC_F + kernel_calling("call (rr), f, (a0, a1);")[len(HEADER):],
    "ok_uncalled_extern": FUNC_F + ".extern .func g(.param .b32 x);\n"
                          + kernel_calling("")[len(HEADER):],
    "ok_system_call": HEADER + ".extern .func (.param .b32 r) vprintf(.param .b64 f, "
                      ".param .b64 a);\n.visible .entry k()\n{\n.param .b64 f0;\n"
                      ".param .b64 f1;\n.param .b32 r0;\nst.param.b64 [f0], 0;\n"
                      "st.param.b64 [f1], 0;\ncall.uni (r0), vprintf, (f0, f1);\nret;\n}\n",
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


# One instruction per kernel, checked at sm_90a: forms ptxas accepts (we must too) and
# misuses it rejects (we must too, on the same line, ideally in the same words).
SM90_HEADER = ".version 8.5\n.target sm_90a\n.address_size 64\n"
SM90_DECLS = (".reg .b32 r<8>;\n.reg .u32 u<4>;\n.reg .s32 s<4>;\n.reg .pred p<4>;\n.reg .f32 f<8>;\n.reg .b64 rd<4>;\n.reg .u64 ud<4>;\n.reg .f64 fd<4>;\n"
     ".reg .f16 h<4>;\n.reg .b16 rs<4>;\n.reg .b16 bh<2>;\n.reg .f16x2 hh<2>;\n.shared .align 16 .b8 smem[256];\n.global .align 4 .u32 gv[4];\n.const .u32 cv;\n")
VALID_FORMS = """
atom.global.add.u32 r1, [rd1], r2;
atom.shared.add.f32 f1, [smem], f2;
atom.add.u64 rd1, [rd2], rd3;
atom.global.cas.b32 r1, [rd1], r2, r3;
atom.global.cas.b64 rd1, [rd1], rd2, rd3;
atom.global.exch.b32 r1, [rd1], r2;
atom.global.inc.u32 r1, [rd1], 17;
atom.global.max.s32 s1, [rd1], s2;
atom.global.min.u64 ud1, [rd1], ud2;
atom.global.and.b32 r1, [rd1], r2;
atom.acq_rel.gpu.global.add.u32 r1, [rd1], 1;
atom.relaxed.sys.global.or.b64 rd1, [rd1], rd2;
atom.global.add.noftz.f16 h1, [rd1], h2;
atom.global.add.noftz.bf16x2 r1, [rd1], r2;
atom.global.add.f64 fd1, [rd1], fd2;
atom.shared::cta.add.u32 r1, [smem+4], 1;
red.global.add.u32 [rd1], r2;
red.global.add.f32 [rd1], f2;
red.release.gpu.global.add.u64 [rd1], rd2;
red.shared.max.s32 [smem], s1;
shfl.sync.idx.b32 r1|p1, r2, 0, 31, 0xffffffff;
shfl.sync.bfly.b32 r1, r2, r3, 0x1f, -1;
shfl.sync.down.b32 f1, f2, 1, 0x1f, 0xffffffff;
vote.sync.ballot.b32 r1, p1, 0xffffffff;
vote.sync.any.pred p1, !p2, r3;
vote.sync.uni.pred p1, p2, 0xffffffff;
match.any.sync.b64 r1, rd1, 0xffffffff;
match.all.sync.b32 r1|p1, r2, 0xffffffff;
redux.sync.add.s32 s1, s2, 0xffffffff;
redux.sync.xor.b32 r1, r2, 0xffffffff;
bar.sync 0;
bar.sync 1, 64;
bar.arrive 2, 64;
bar.red.popc.u32 r1, 0, p1;
bar.red.and.pred p1, 3, !p2;
bar.warp.sync 0xffffffff;
barrier.sync 0;
barrier.sync.aligned 0, 32;
bar.cta.sync 0;
barrier.cluster.arrive.release.aligned;
barrier.cluster.wait;
membar.gl;
membar.cta;
fence.acq_rel.gpu;
fence.proxy.async.shared::cta;
isspacep.global p1, rd1;
isspacep.shared::cta p1, rd1;
cvta.to.global.u64 rd1, rd2;
cvta.shared.u64 rd1, smem;
cvta.global.u64 rd1, gv;
mov.u64 rd1, gv;
mov.u64 rd1, smem;
mov.b32 f1, 0f3F800000;
mov.f32 f1, 0f3F800000;
mov.f64 fd1, 0d3FF0000000000000;
mov.b16 rs1, 0x3C00;
mov.b32 hh1, {h1, h2};
mov.b32 {h1, h2}, hh1;
cvt.rn.f16.f32 h1, f1;
cvt.f32.f16 f1, h1;
cvt.rn.bf16.f32 bh1, f1;
cvt.rn.f16x2.f32 hh1, f1, f2;
cvt.rn.bf16x2.f32 r1, f1, f2;
cvt.rna.tf32.f32 r1, f1;
cvt.u8.u32 rs1, r1;
cvt.s64.s32 rd1, r1;
cvt.rzi.s32.f32 s1, f1;
cvt.rni.f32.f32 f1, f1;
cvt.sat.u8.s32 r1, s1;
cvt.ftz.sat.f32.f32 f1, f1;
cvt.u32.u64 r1, rd1;
add.rn.f16 h1, h2, h3;
add.f16x2 hh1, hh1, hh1;
fma.rn.f16x2 r1, r2, r3, r4;
fma.rn.relu.bf16 bh1, bh1, bh1, bh1;
max.NaN.f32 f1, f2, f3;
min.xorsign.abs.f32 f1, f2, f3;
max.s16x2 r1, r2, r3;
add.s16x2 r1, r2, r3;
mul.wide.u16 r1, rs1, rs2;
mul.hi.s64 rd1, rd2, rd3;
mad.lo.cc.u32 r1, r2, r3, r4;
madc.hi.u32 r1, r2, r3, r4;
addc.cc.u32 r1, r2, r3;
sub.cc.s64 rd1, rd2, rd3;
div.rn.f64 fd1, fd2, fd3;
div.full.f32 f1, f2, f3;
rem.s64 rd1, rd2, rd3;
rcp.approx.ftz.f64 fd1, fd2;
sqrt.rn.f32 f1, f2;
rsqrt.approx.f64 fd1, fd2;
ex2.approx.ftz.f32 f1, f2;
tanh.approx.f32 f1, f2;
lg2.approx.ftz.f32 f1, f2;
testp.finite.f32 p1, f1;
copysign.f64 fd1, fd2, fd3;
setp.eq.and.s32 p1|p2, r1, r2, p3;
setp.gtu.ftz.f32 p1, f1, 0f00000000;
setp.ne.b64 p1, rd1, 0;
setp.lt.f16 p1, h1, h2;
set.gt.u32.f32 r1, f1, f2;
selp.f32 f1, f2, 0f3F800000, p1;
slct.s32.s32 r1, r2, r3, s1;
lop3.b32 r1, r2, r3, r4, 0x96;
shf.l.wrap.b32 r1, r2, r3, 5;
shr.s64 rd1, rd2, 3;
bfe.u64 rd1, rd2, 4, 8;
bfi.b32 r1, r2, r3, 0, 8;
bfind.u64 r1, rd1;
popc.b64 r1, rd1;
clz.b64 r1, rd1;
brev.b64 rd1, rd2;
prmt.b32.f4e r1, r2, r3, r4;
dp4a.u32.s32 s1, r2, r3, s2;
dp2a.lo.s32.u32 s1, r2, r3, s2;
sad.u32 r1, r2, r3, r4;
mul24.hi.s32 s1, s2, s3;
abs.bf16x2 r1, r2;
neg.f16 h1, h2;
not.pred p1, p2;
and.pred p1, p2, !p3;
xor.b16 rs1, rs2, rs3;
cnot.b32 r1, r2;
ld.global.nc.L1::no_allocate.v4.f32 {f1, f2, f3, f4}, [rd1];
ld.global.L2::128B.u32 r1, [rd1];
ld.shared.v2.b64 {rd1, rd2}, [smem];
ld.relaxed.gpu.global.u32 r1, [rd1];
ld.volatile.shared.u32 r1, [smem+8];
ld.global.cs.b16 rs1, [rd1];
ld.global.s8 r1, [rd1];
ldu.global.u32 r1, [rd1];
st.global.wt.f64 [rd1], fd1;
st.release.sys.global.u32 [rd1], r1;
st.shared.v4.u32 [smem], {r1, r2, r3, r4};
st.global.u8 [rd1], 255;
st.global.v2.f32 [rd1+8], {f1, 0f00000000};
st.local.u32 [rd1], r1;
prefetch.global.L2 [rd1];
prefetch.global.L2::evict_last [rd1];
cp.async.ca.shared.global [smem], [rd1], 4;
cp.async.cg.shared.global [smem], [rd1], 16, 8;
cp.async.commit_group;
cp.async.wait_group 0;
cp.async.wait_all;
ldmatrix.sync.aligned.m8n8.x4.shared.b16 {r1, r2, r3, r4}, [smem];
stmatrix.sync.aligned.m8n8.x2.shared.b16 [smem], {r1, r2};
mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {f1,f2,f3,f4}, {r1,r2,r3,r4}, {r5,r6}, {f5,f6,f7,f4};
mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32 {s1,s2,s3,s0}, {r1,r2,r3,r4}, {r5,r6}, {s1,s2,s3,s0};
wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {r0,r1,r2,r3,r4,r5,r6,r7}, [rd1];
activemask.b32 r1;
elect.sync r1|p1, 0xffffffff;
mapa.shared::cluster.u32 r1, r2, 1;
getctarank.shared::cluster.u32 r1, r2;
griddepcontrol.wait;
griddepcontrol.launch_dependents;
setmaxnreg.inc.sync.aligned.u32 240;
mbarrier.init.shared.b64 [smem], 32;
mbarrier.arrive.shared.b64 rd1, [smem];
mbarrier.try_wait.parity.shared::cta.b64 p1, [smem], r1;
nanosleep.u32 100;
createpolicy.fractional.L2::evict_last.L2::evict_unchanged.b64 rd1, 0.5;
createpolicy.fractional.L2::evict_first.b64 rd1;
createpolicy.range.global.L2::evict_last.L2::evict_first.b64 rd1, [rd2], 128, 256;
st.relaxed.cta.global.b16 [rd1], rs1;
trap;
brkpt;
pmevent 1;
exit;
""".strip().splitlines()
INVALID_FORMS = """
atom.global.add.b32 r1, [rd1], r2;
atom.global.cas.b32 r1, [rd1], r2;
atom.global.add.u32 [rd1], r2;
atom.const.add.u32 r1, [cv], 1;
atom.global.add.u32 r1, [rd1], f1;
atom.global.inc.s32 r1, [rd1], 1;
atom.global.and.u32 r1, [rd1], 1;
atom.local.add.u32 r1, [rd1], 1;
red.global.add.u32 r1, [rd1], r2;
red.global.cas.b32 [rd1], r2, r3;
shfl.sync.idx.b32 r1, r2, 0, 31;
shfl.sync.idx.b64 rd1, rd2, 0, 31, -1;
shfl.sync.b32 r1, r2, 0, 31, -1;
vote.sync.ballot.pred p1, p2, -1;
vote.sync.any.pred r1, p2, -1;
vote.sync.all.b32 r1, p2, -1;
match.any.sync.b16 r1, rs1, -1;
redux.sync.add.u64 rd1, rd2, -1;
redux.sync.and.u32 r1, r2, -1;
bar.sync f1;
bar.red.popc.u32 r1, 0;
bar.red.and.pred p1, 0, r1;
bar.foo 0;
barrier.cluster.sync;
membar.foo;
membar;
isspacep.global r1, rd1;
cvta.to.global.u32 rd1, rd2;
mov.u64 rd1, nosuch;
ld.global.u32 r1, [nosuch];
st.global.u32 [rd1], nosuch;
ld.shared.u32 r1, [gv];
st.const.u32 [cv], r1;
setp.lt.f32 p1, f1;
selp.b32 r1, r2, r3, r4;
fma.f32 f1, f2, f3, f4;
mad.lo.f32 f1, f2, f3, f4;
div.f32 f1, f2, f3;
sqrt.f32 f1, f2;
rcp.f64 fd1, fd2;
ex2.f32 f1, f2;
cvt.rn.f32 f1, r1;
cvt.f32.f32.f32 f1, f1;
brev.b16 rs1, rs2;
popc.b32 rd1, r1;
shl.b32 r1, r2, rd1;
prmt.b32.foo r1, r2, r3, r4;
lop3.b32 r1, r2, r3, r4;
bfe.b32 r1, r2, 1, 2;
mul.wide.u64 rd1, rd2, rd3;
createpolicy.fractional.L2::evict_last.b64 rd1, [rd2], 128, 256;
createpolicy.fractional.L2::evict_last.b64 r1, 0.5;
st.cta.global.b16 [rd1], rs1;
ld.global.f16 h1, [rd1];
""".strip().splitlines()


# Instructions tied to a PTX version / target: each is compiled for too old a target, too
# old a version, sm_90 and sm_90a, and our verdict must be ptxas's.
FEATURE_DECLS = (".reg .b32 r<8>;\n.reg .pred p<4>;\n.reg .b64 rd<4>;\n"
                 ".shared .align 16 .b8 smem[256];\n")
FEATURE_USES = {"cp.async": "cp.async.ca.shared.global [smem], [rd1], 4;", "ldmatrix": "ldmatrix.sync.aligned.m8n8.x1.shared.b16 {r1}, [smem];",
 "match": "match.any.sync.b32 r1, r2, -1;", "activemask": "activemask.b32 r1;", "nanosleep": "nanosleep.u32 5;", "elect": "elect.sync r1|p1, -1;",
 "mapa": "mapa.shared::cluster.u32 r1, r2, 1;", "getctarank": "getctarank.shared::cluster.u32 r1, r2;", "griddepcontrol": "griddepcontrol.wait;",
 "setmaxnreg": "setmaxnreg.inc.sync.aligned.u32 240;", "stmatrix": "stmatrix.sync.aligned.m8n8.x1.shared.b16 [smem], {r1};", "redux": "redux.sync.add.u32 r1, r2, -1;",
 "shfl.sync": "shfl.sync.idx.b32 r1, r2, 0, 31, -1;", "vote.sync": "vote.sync.any.pred p1, p2, -1;", "bar.warp.sync": "bar.warp.sync -1;", "fence.acq_rel": "fence.acq_rel.gpu;",
 "ld.acquire": "ld.acquire.gpu.global.u32 r1, [rd1];", "mma": "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {r0,r1,r2,r3}, {r4,r5,r6,r7}, {r0,r1}, {r0,r1,r2,r3};",
 "cvt.bf16": "cvt.rn.bf16x2.f32 r1, r2, r3;", "tanh": "tanh.approx.f32 r1, r2;", "ex2.f16": "ex2.approx.f16 r1, r1;", "lop3": "lop3.b32 r1, r2, r3, r4, 0x96;",
 "barrier.cluster": "barrier.cluster.arrive;", "multimem": "multimem.ld_reduce.relaxed.sys.global.add.u32 r1, [rd1];", "prmt": "prmt.b32 r1, r2, r3, r4;", "dp4a": "dp4a.u32.u32 r1, r2, r3, r4;",
 "bmsk": "bmsk.clamp.b32 r1, r2, r3;", "szext": "szext.clamp.s32 r1, r2, r3;", "fns": "fns.b32 r1, r2, r3, 1;", "add.s16x2": "add.s16x2 r1, r2, r3;", "min.relu": "min.relu.s32 r1, r2, r3;",
 "cp.async.bulk": "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [smem], [rd1], 16, [smem];", "mbarrier": "mbarrier.init.shared.b64 [smem], 1;",
 "ld.L2::256B": "ld.global.L2::256B.u32 r1, [rd1];", "st.async": "st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [rd1], r1, [rd2];"}
FEATURE_SETTINGS = (("9.0", "sm_70", "sm_90"), ("6.0", "sm_90", "sm_90"), ("9.0", "sm_90", "sm_90"),
                    ("9.0", "sm_90a", "sm_90a"))


def feature_kernel(use: str, version: str, target: str) -> str:
    return (f".version {version}\n.target {target}\n.address_size 64\n.visible .entry k()\n{{\n"
            + FEATURE_DECLS + use + "\nret;\n}\n")


def sm90_kernel(line: str) -> str:
    return (SM90_HEADER + ".visible .entry k(.param .u64 pp)\n{\n" + SM90_DECLS + line
            + "\nret;\n}\n")


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
