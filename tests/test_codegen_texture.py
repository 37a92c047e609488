"""Surface loads/stores/reductions and header queries on a handle in a register (issue 15):
our cubin's texture/surface instructions against ptxas's for the same kernel, opcode with
every modifier and operand shape (register numbers aside), and nvdisasm reading our words
back. The handles differ per thread (loaded from `hp[tid]`), so ptxas writes the `.B`
forms with the handle in a register, as we do. The emulator does not model surfaces or
textures yet: values are not compared."""
import re

import pytest

from ptx2sass import CompileError, codegen, oracle

KERNEL = """.version 7.8
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 hp)
{{
.reg .b64 %rd<20>;
.reg .b32 %r<40>;
.reg .b16 %h<20>;
ld.param.u64 %rd1, [out];
ld.param.u64 %rd4, [hp];
mov.u32 %r20, %tid.x;
mul.wide.u32 %rd7, %r20, 64;
add.s64 %rd8, %rd4, %rd7;
ld.global.u64 %rd3, [%rd8];
ld.global.v4.u32 {{%r1,%r2,%r3,%r4}}, [%rd8+16];
ld.global.v4.u32 {{%r5,%r6,%r7,%r8}}, [%rd8+32];
ld.global.v2.u64 {{%rd5,%rd6}}, [%rd8+48];
ld.global.v4.u16 {{%h5,%h6,%h7,%h8}}, [%rd8+8];
{line};
{stores}
ret;
}}"""

# (results, their PTX type, instruction)
FORMS = [
    (1, "b32", "suld.b.1d.b32.trap %r10, [%rd3, {%r1}]"),
    (2, "b32", "suld.b.2d.v2.b32.clamp {%r10,%r11}, [%rd3, {%r1,%r2}]"),
    (4, "b32", "suld.b.3d.v4.b32.zero {%r10,%r11,%r12,%r13}, [%rd3, {%r1,%r2,%r3,%r4}]"),
    (1, "b32", "suld.b.a1d.b32.trap %r10, [%rd3, {%r5,%r1}]"),
    (1, "b32", "suld.b.a2d.b32.trap %r10, [%rd3, {%r5,%r1,%r2,%r3}]"),
    (1, "b16", "suld.b.1d.b8.trap %h10, [%rd3, {%r1}]"),
    (1, "b16", "suld.b.2d.b16.zero %h10, [%rd3, {%r1,%r2}]"),
    (2, "b16", "suld.b.1d.v2.b16.trap {%h10,%h11}, [%rd3, {%r1}]"),
    (4, "b16", "suld.b.2d.v4.b16.clamp {%h10,%h11,%h12,%h13}, [%rd3, {%r1,%r2}]"),
    (1, "b64", "suld.b.1d.b64.trap %rd10, [%rd3, {%r1}]"),
    (2, "b64", "suld.b.2d.v2.b64.trap {%rd10,%rd11}, [%rd3, {%r1,%r2}]"),
    (0, "b32", "sust.b.2d.v4.b32.clamp [%rd3, {%r1,%r2}], {%r5,%r6,%r7,%r8}"),
    (0, "b32", "sust.b.3d.b32.zero [%rd3, {%r1,%r2,%r3,%r4}], %r5"),
    (0, "b32", "sust.b.1d.b32.trap [%rd3, {%r1}], %r5"),
    (0, "b32", "sust.b.a1d.v2.b32.trap [%rd3, {%r5,%r1}], {%r6,%r7}"),
    (0, "b32", "sust.b.1d.v2.b64.trap [%rd3, {%r1}], {%rd5,%rd6}"),
    (0, "b32", "sust.b.2d.b16.trap [%rd3, {%r1,%r2}], %h5"),
    (0, "b32", "sust.p.2d.v4.b32.trap [%rd3, {%r1,%r2}], {%r5,%r6,%r7,%r8}"),
    (0, "b32", "sured.b.add.2d.u32.trap [%rd3, {%r1,%r2}], %r5"),
    (0, "b32", "sured.b.min.3d.s32.clamp [%rd3, {%r1,%r2,%r3,%r4}], %r5"),
    (0, "b32", "sured.b.max.2d.u32.zero [%rd3, {%r1,%r2}], %r5"),
    (0, "b32", "sured.b.and.2d.b32.trap [%rd3, {%r1,%r2}], %r5"),
    (0, "b32", "sured.b.add.2d.u64.trap [%rd3, {%r1,%r2}], %rd5"),
    (1, "b32", "suq.width.b32 %r10, [%rd3]"),
    (1, "b32", "suq.height.b32 %r10, [%rd3]"),
    (1, "b32", "suq.depth.b32 %r10, [%rd3]"),
    (1, "b32", "txq.width.b32 %r10, [%rd3]"),
]
UNIT = re.compile(r"^(?:@!?U?P\d )?(SULD|SUST|SURED|TXQ|TEX|TLD|TLD4|TXD|TMML)\b")


def kernel(n: int, ty: str, line: str) -> str:
    reg = {"b64": "%rd", "b16": "%h"}.get(ty, "%r")
    stores = "".join(f"st.global.{ty} [%rd1+{8 * i}], {reg}{10 + i};\n" for i in range(n))
    return KERNEL.format(line=line, stores=stores)


def unit_lines(cubin: bytes) -> list[str]:
    """The texture/surface instructions of a listing, registers as R (their numbers are
    the allocators' choice), the control fields left out."""
    out = []
    for row in oracle.nvdisasm(cubin, ()).splitlines():
        m = re.match(r"\s*/\*[0-9a-f]{4}\*/\s+(.*?)\s*;", row)
        if m and UNIT.match(m.group(1)):
            out.append(re.sub(r"\bR\d+\b", "R", m.group(1)))
    return out


@pytest.mark.parametrize("n,ty,line", FORMS, ids=[f[2].split(" ")[0] for f in FORMS])
def test_surface_instruction_as_ptxas(n, ty, line):
    ptx = kernel(n, ty, line)
    run = oracle.ptxas(ptx, "sm_89")
    assert run.ok, run.stderr
    theirs = unit_lines(run.output)
    ours = unit_lines(codegen.compile_ptx(ptx, "sm_89"))
    assert theirs and ours == theirs


@pytest.mark.parametrize("line", [
    "sured.b.add.1d.u32.trap [%rd3, {%r1}], %r5",           # ptxas: a guarded SURED
    "suld.b.2d.b32.trap %r10, [sr, {%r1,%r2}]",              # module .surfref
])
def test_unselected_forms_refused_at_their_line(line):
    ptx = kernel(1 if "suld" in line else 0, "b32", line).replace(
        ".visible .entry", ".global .surfref sr;\n.visible .entry")
    with pytest.raises(CompileError, match="line 20"):
        codegen.compile_ptx(ptx, "sm_89", "t.ptx")


def test_targets_without_the_instruction_refuse_at_the_line():
    """sm_90's encoding table has no texture/surface forms yet: a clear refusal, not an
    internal encoding error."""
    ptx = kernel(1, "b32", "suq.width.b32 %r10, [%rd3]").replace("sm_89", "sm_90")
    with pytest.raises(CompileError, match=r"t\.ptx, line 19; error   : `suq` on sm_90 not supported yet"):
        codegen.compile_ptx(ptx, "sm_90", "t.ptx")
