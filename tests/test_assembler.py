"""`ptx2sass-as`: hand-written SASS → cubin, checked against NVIDIA's tools and NumPy, and the
"re-assembled cubins equal ptxas's" bar.

(a) nvdisasm reads our cubins back as exactly the text we wrote;
(b) the emulator runs them (decoding with nvdisasm's listing, independent of our codec) and
    gives what NumPy computes;
(c) ptxas's corpus cubins decoded word by word with our codec, re-encoded and written back:
    identical `.text` and file; and `nvdisasm -hex` listings of them re-assembled: the same
    `cuobjdump -elf` except the tool-identification note. Kernels with a word the codec
    does not read yet are xfailed with the word (the rate is the pass/xfail count).

PTX2SASS_SAMPLE bounds (c): default 12 ZLUDA kernels; a number N: N kernels; `all`: every
kernel of every corpus (zluda, tinygrad, cuda).
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.emu import run
from tools.emu_testing import cubin_listing_decoder, zluda_cubin, zluda_manifest
from ptx2sass.encoder import codec
from ptx2sass.encoder.assembler import AsmError, assemble, highest_register, main
from ptx2sass.encoder.cubin import read_cubin, write_cubin
from ptx2sass.encoder.sass_text import format_instruction, parse_listing

SAMPLE = os.environ.get("PTX2SASS_SAMPLE", "")
REPO = Path(__file__).resolve().parent.parent

# c[i] = a[i] + b[i] for i < n. `.reuse` needs bit 109 (`yield`) for nvdisasm to print it.
VADD = """\
.arch sm_89
.kernel vadd
.params 8, 8, 8, 4
        MOV R1, c[0x0][0x28] ;                                 {stall=2}
        S2R R6, SR_CTAID.X ;                                   {stall=1, wr=0}
        S2R R3, SR_TID.X ;                                     {stall=1, wr=0}
        MOV R0, c[0x0][0x0] ;                                  {stall=1}
        MOV R8, c[0x0][0x178] ;                                {stall=2}
        IMAD R6, R6, R0, R3 ;                                  {stall=5, wait=0b1}
        ISETP.GE.U32.AND P0, PT, R6, R8, PT ;                  {stall=13}
        @P0 EXIT ;                                             {stall=5, yield}
        MOV R7, 0x4 ;                                          {stall=1}
        ULDC.64 UR4, c[0x0][0x118] ;                           {stall=4}
        IMAD.WIDE.U32 R2, R6, R7, c[0x0][0x160] ;              {stall=4}
        IMAD.WIDE.U32 R4, R6.reuse, R7.reuse, c[0x0][0x168] ;  {stall=2, yield}
        LDG.E R2, [R2.64] ;                                    {stall=4, wr=2}
        LDG.E R5, [R4.64] ;                                    {stall=1, wr=2}
        IMAD.WIDE.U32 R6, R6, R7, c[0x0][0x170] ;              {stall=1}
        FADD R9, R2, R5 ;                                      {stall=5, wait=0b100}
        STG.E [R6.64], R9 ;                                    {stall=1}
        EXIT ;                                                 {stall=5, yield}
.L_x_0:
        BRA `(.L_x_0) ;
"""

# out[0] = a[0] + a[1] + ... + a[n-1] (n >= 1), summed in order by one thread: a backward
# branch to a label, a predicate loop condition, a carry chain.
SUM = """\
.arch sm_89
.kernel sum
.params 8, 8, 4
        MOV R1, c[0x0][0x28] ;                      {stall=1}
        MOV R0, c[0x0][0x170] ;                     {stall=1}
        MOV R2, c[0x0][0x160] ;                     {stall=1}
        MOV R3, c[0x0][0x164] ;                     {stall=1}
        ULDC.64 UR4, c[0x0][0x118] ;                {stall=1}
        MOV R4, RZ ;                                {stall=4}
.L_x_0:
        LDG.E R5, [R2.64] ;                         {stall=1, wr=0, rd=1}
        IADD3 R2, P0, R2, 0x4, RZ ;                 {stall=1, wait=0b10}
        IADD3 R0, R0, -0x1, RZ ;                    {stall=4}
        IMAD.X R3, RZ, RZ, R3, P0 ;                 {stall=1}
        ISETP.NE.AND P1, PT, R0, RZ, PT ;           {stall=1}
        FADD R4, R4, R5 ;                           {stall=13, wait=0b1}
        @P1 BRA `(.L_x_0) ;                         {stall=5}
        MOV R6, c[0x0][0x168] ;                     {stall=1}
        MOV R7, c[0x0][0x16c] ;                     {stall=5}
        STG.E [R6.64], R4 ;                         {stall=1}
        EXIT ;                                      {stall=5}
.L_x_1:
        BRA `(.L_x_1) ;
"""


def _written(source: str) -> list[str]:
    """The instruction texts of an assembler input, as written (no control blocks)."""
    out = []
    for line in source.splitlines():
        line = line.strip()
        if line and not line.startswith(".") and not line.endswith(":"):
            out.append(line.split(";")[0].strip())
    return out


def _nvdisasm_texts(cubin: bytes, kernel: str) -> list[str]:
    listing = parse_listing(oracle.nvdisasm(cubin))
    return [e.text for e in listing.function(kernel).entries]


@pytest.mark.parametrize("source,kernel", [(VADD, "vadd"), (SUM, "sum")])
def test_nvdisasm_reads_back_what_we_wrote(source, kernel):
    cubin = assemble(source)
    texts = _nvdisasm_texts(cubin, kernel)
    written = _written(source)
    assert texts[:len(written)] == written
    assert set(texts[len(written):]) <= {"NOP"} and len(texts) % 8 == 0   # 128-byte padding


def test_vadd_runs_as_numpy_says():
    rng = np.random.default_rng(3)
    n = 200
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    c = np.full(256, 7, np.float32)
    cubin = assemble(VADD)
    result = run(cubin, "vadd", (4,), (64,), [a, b, c, np.uint32(n)],
                 decoder=cubin_listing_decoder(cubin))
    assert np.array_equal(c[:n], a + b) and np.all(c[n:] == 7)
    assert result.stats["hazards"] == 0
    # the same with the emulator's own decoder (our codec): no NVIDIA tool in the loop
    c[:] = 7
    result = run(cubin, "vadd", (4,), (64,), [a, b, c, np.uint32(n)])
    assert np.array_equal(c[:n], a + b) and np.all(c[n:] == 7)
    assert result.stats["hazards"] == 0


def test_sum_loop_runs_as_numpy_says():
    rng = np.random.default_rng(4)
    a = rng.standard_normal(37).astype(np.float32)
    out = np.zeros(1, np.float32)
    want = np.float32(0)
    for x in a:                       # in order, rounding to float32 at each step
        want = np.float32(want + x)
    cubin = assemble(SUM)
    for decoder in (cubin_listing_decoder(cubin), None):     # nvdisasm's reading, then ours
        out[0] = 0
        result = run(cubin, "sum", (1,), (1,), [a, out, np.uint32(len(a))], decoder=decoder)
        assert out[0] == want
        assert result.stats["hazards"] == 0


def test_control_fields_reach_the_hazard_checker():
    """Dropping the FADD's wait on the loads' scoreboard is a read-before-ready hazard."""
    racy = VADD.replace("{stall=5, wait=0b100}", "{stall=5}")
    assert racy != VADD
    cubin = assemble(racy)
    a = b = np.ones(64, np.float32)
    c = np.zeros(64, np.float32)
    try:
        result = run(cubin, "vadd", (1,), (64,), [a, b, c, np.uint32(64)],
                     decoder=cubin_listing_decoder(cubin))
    except Exception as e:          # the checker may stop the run at the hazard
        assert "hazard" in str(e).lower(), e
    else:
        assert result.stats["hazards"] > 0


def test_kernels_in_ptx_order_are_stored_as_ptxas_stores_them():
    two = VADD + SUM.replace(".arch sm_89\n", "")
    ours = [k.name for k in read_cubin(assemble(two)).kernels]
    ptx = (".version 8.0\n.target sm_89\n.address_size 64\n"
           ".visible .entry vadd() { ret; }\n.visible .entry sum() { ret; }\n")
    theirs = [k.name for k in read_cubin(oracle.ptxas(ptx, "sm_89").output).kernels]
    assert ours == theirs == ["sum", "vadd"]


def test_register_count_follows_ptxas_rule():
    """The default register count is ptxas's for the same registers: ptxas's vector add
    also ends at R9 (compiled from PTX)."""
    ours = read_cubin(assemble(VADD)).kernel("vadd")
    theirs = read_cubin(oracle.ptxas(_VADD_PTX, "sm_89").output).kernel("vadd")
    assert ours.regcount == theirs.regcount
    assert sorted(ours.params) == sorted(theirs.params)


_VADD_PTX = r"""
.version 8.0
.target sm_89
.address_size 64
.visible .entry vadd(.param .u64 a, .param .u64 b, .param .u64 c, .param .u32 n)
{
    .reg .u64 %rd<10>; .reg .u32 %r<6>; .reg .f32 %f<4>; .reg .pred %p;
    ld.param.u64 %rd1, [a]; ld.param.u64 %rd2, [b]; ld.param.u64 %rd3, [c]; ld.param.u32 %r1, [n];
    mov.u32 %r2, %ctaid.x; mov.u32 %r3, %ntid.x; mov.u32 %r4, %tid.x;
    mad.lo.u32 %r5, %r2, %r3, %r4;
    setp.ge.u32 %p, %r5, %r1;
    @%p bra DONE;
    mul.wide.u32 %rd4, %r5, 4;
    add.u64 %rd5, %rd1, %rd4; add.u64 %rd6, %rd2, %rd4; add.u64 %rd7, %rd3, %rd4;
    ld.global.f32 %f1, [%rd5]; ld.global.f32 %f2, [%rd6];
    add.f32 %f3, %f1, %f2;
    st.global.f32 [%rd7], %f3;
DONE:
    ret;
}
"""


# --- errors: one line, file:line, naming the instruction -------------------------------

@pytest.mark.parametrize("body,line,words", [
    (".arch sm_89\n.kernel k\n  FROB R1, R2 ;\n", 3, ["FROB"]),
    (".arch sm_89\n.kernel k\n  IADD3 R1, R2, R300, RZ ;\n", 3, ["IADD3"]),
    (".arch sm_89\n.kernel k\n  BRA `(.L_nowhere) ;\n", 3, ["BRA", ".L_nowhere", "undefined"]),
    (".arch sm_89\n.kernel k\n  EXIT ; {stall=16}\n", 3, ["EXIT", "stall"]),
    (".arch sm_89\n.kernel k\n  EXIT ; {speed=1}\n", 3, ["EXIT", "speed"]),
    (".arch sm_89\n  EXIT ;\n", 2, ["before any", ".kernel"]),
    (".kernel k\n  EXIT ;\n", None, ["no architecture"]),
    (".arch sm_13\n", 1, ["sm_13"]),
    (".arch sm_89\n.kernel k\n.params 8, x\n  EXIT ;\n", 3, [".param"]),
    (".arch sm_89\n.kernel k\n.frobnicate 1\n", 3, [".frobnicate"]),
    (".arch sm_89\n.kernel k\n  /*0010*/ EXIT ;\n", 3, ["EXIT", "0x0010"]),
    (".arch sm_89\n.kernel k\n  IADD3 R1, , R2 ;\n", 3, ["IADD3"]),
    (".arch sm_89\n", None, ["no kernel"]),
])
def test_errors_are_one_clear_line(tmp_path, capsys, body, line, words):
    src = tmp_path / "k.sass"
    src.write_text(body)
    rc = main([str(src), "-o", str(tmp_path / "k.cubin")])
    err = capsys.readouterr().err.strip()
    assert rc == 1 and "\n" not in err and "Traceback" not in err, err
    where = f"{src}:{line}: error: " if line is not None else f"{src}: error: "
    assert err.startswith(where), err
    for w in words:
        assert w in err, err
    assert not (tmp_path / "k.cubin").exists()


@pytest.mark.parametrize("barrier", [0, 3, 15])
def test_default_barrier_count_is_ptxas_count(barrier):
    ptx = (".version 8.0\n.target sm_89\n.address_size 64\n"
           f".visible .entry k() {{ bar.sync {barrier}; ret; }}\n")
    theirs = read_cubin(oracle.ptxas(ptx, "sm_89").output).kernel("k").barcount
    src = f".arch sm_89\n.kernel k\n  BAR.SYNC.DEFER_BLOCKING {barrier:#x} ;\n  EXIT ;\n"
    try:
        ours = read_cubin(assemble(src)).kernel("k").barcount
    except AsmError as e:
        if "cannot encode" in str(e):
            pytest.xfail(f"codec: {e}")
        raise
    assert ours == theirs


@pytest.mark.parametrize("block,words", [
    ("{ctl=0x1, stall=1}", ["ctl="]),
    ("{wr=6}", ["wr=6", "0..5"]),
    ("{wait=0x40}", ["wait"]),
    ("{stall}", ["stall"]),
])
def test_bad_control_blocks(block, words):
    with pytest.raises(AsmError) as e:
        assemble(f".arch sm_89\n.kernel k\n  EXIT ; {block}\n")
    assert str(e.value).startswith("<input>:3: error: `EXIT`")
    for w in words:
        assert w in str(e.value)


def test_reads_standard_input(tmp_path, monkeypatch):
    import io
    monkeypatch.setattr("sys.stdin", io.StringIO(VADD))
    assert main(["-o", str(tmp_path / "v.cubin")]) == 0
    assert (tmp_path / "v.cubin").read_bytes() == assemble(VADD)


def test_garbage_never_escapes_as_a_traceback():
    """Random assembler input made of plausible pieces: AsmError or a cubin, nothing else."""
    from hypothesis import given, settings, strategies as st
    pieces = [".arch sm_89", ".arch sm_99", ".kernel k", ".kernel 9", ".params 8, 4", ".params",
              ".param -1", ".regcount x", ".shared 16", ".maxntid 1,2,3,4", ".L_x_0:", "k:",
              "EXIT ;", "@P0 EXIT ; {stall=3}", "BRA `(.L_x_0) ;", "MOV R1, c[0x0][0x28] ;",
              "IADD3 R1, R2, R3 ;", "/*0000*/ EXIT ;", "/* 0x000fea0003800000 */", "S2R R0, ;",
              ".section .text.k,\"ax\",@progbits", ".section .nv.info.k", "/*0000*/ .byte 0x04",
              "{stall=1}", "EXIT ; {yield, reuse=0b11}", "LDG.E R2, [R2.64] ; {wr=0}", ""]

    @settings(max_examples=150, deadline=None, derandomize=True)
    @given(st.lists(st.sampled_from(pieces), max_size=8))
    def check(lines):
        try:
            assemble("\n".join(lines))
        except AsmError:
            pass
    check()


def test_command_writes_the_cubin(tmp_path):
    (tmp_path / "v.sass").write_text(VADD)
    assert main([str(tmp_path / "v.sass"), "-o", str(tmp_path / "v.cubin")]) == 0
    assert (tmp_path / "v.cubin").read_bytes() == assemble(VADD)
    with pytest.raises(AsmError, match="sm_89, not sm_86"):
        assemble(VADD, "sm_86")


# --- (c) re-assembly of ptxas's cubins ------------------------------------------------------

def _corpus_cubins() -> list[tuple[str, bytes]]:
    """(name, ptxas cubin for sm_89) for the sampled corpus files."""
    out = []
    for e in zluda_manifest():
        out.append((f"zluda/{e['name']}", e))
    if SAMPLE == "all":
        from tools.corpora import corpus_dirs, ptx_files
        for corpus in ("tinygrad", "cuda"):
            root = corpus_dirs()[corpus]
            out.extend((f"{corpus}/{p.relative_to(root).as_posix()}", p)
                       for p in ptx_files(corpus))
    elif SAMPLE.isdigit():
        out = out[:int(SAMPLE)]
    else:
        out = out[::max(1, len(out) // 12)][:12]
    return out


def _cubin(item) -> bytes | None:
    if isinstance(item, dict):
        return zluda_cubin(item)
    run_ = oracle.ptxas(item.read_bytes(), "sm_89", name=item.name)
    return run_.output if run_.ok and run_.output else None


CORPUS = _corpus_cubins()


def _reencoded_text(text: bytes, arch: str) -> bytes:
    out = bytearray()
    for pc in range(0, len(text), 16):
        word = int.from_bytes(text[pc:pc + 16], "little")
        try:
            ins = codec.decode(word, arch, pc)
            again = codec.encode(ins, arch, pc)
        except (codec.DecodeError, codec.EncodeError) as e:
            pytest.xfail(f"codec does not cover word {word:#034x} at {pc:#x}: "
                         f"{str(e).splitlines()[0][:120]}")
        if again != word:   # a field the decoder does not read back yet (e.g. hidden by nvdisasm)
            pytest.xfail(f"codec round trip loses bits {word ^ again:#x} of {word:#034x} "
                         f"at {pc:#x} ({format_instruction(ins)})")
        out += again.to_bytes(16, "little")
    return bytes(out)


@pytest.mark.parametrize("name,item", CORPUS, ids=[n for n, _ in CORPUS])
def test_reassembled_cubin_equals_ptxas(name, item):
    """Read ptxas's cubin, decode every text word with our codec, encode it again, write the
    file back with our writer: the same text and the same file."""
    data = _cubin(item)
    if data is None:
        pytest.skip("ptxas rejects this PTX for sm_89")
    cubin = read_cubin(data)
    for k in cubin.kernels:
        text = _reencoded_text(k.text, cubin.arch)
        assert text == k.text
        k.text = text
    again = write_cubin(cubin)
    assert again == data
    assert oracle.cuobjdump_elf(again) == oracle.cuobjdump_elf(data)


FAMILY = [(arch, name, e) for name, e in CORPUS if isinstance(e, dict)
          for arch in ("sm_86", "sm_80", "sm_75", "sm_90", "sm_120")][:None if SAMPLE == "all" else 15]


@pytest.mark.parametrize("arch,name,entry", FAMILY, ids=[f"{a}-{n}" for a, n, _ in FAMILY])
def test_reassembled_cubin_equals_ptxas_family(arch, name, entry):
    """The same bar for the other arches of the sm_89 encoding family and for sm_75 and
    sm_90 (their own "turing" and "hopper" tables) (ZLUDA's PTX, its `.target` retargeted
    where ptxas needs it)."""
    from tools.emu_testing import zluda_ptx
    from tools.corpus_words import compile_for
    data, _ = compile_for(zluda_ptx(entry).encode(), arch, entry["ptx"])
    if data is None:
        pytest.skip(f"ptxas rejects this PTX for {arch}")
    cubin = read_cubin(data)
    for k in cubin.kernels:
        k.text = _reencoded_text(k.text, arch)
    assert write_cubin(cubin) == data


def test_default_register_count_is_ptxas_count():
    """The assembler's default `.regcount` (highest R register used + 3, with register
    pairs and quads) equals ptxas's own count for the sampled corpus kernels' code."""
    checked = 0
    for name, item in CORPUS:
        data = _cubin(item)
        if data is None:
            continue
        cubin = read_cubin(data)
        for k in cubin.kernels:
            if not k.is_entry:
                continue    # a device function's count follows the calling convention
            try:
                code = [codec.decode(int.from_bytes(k.text[pc:pc + 16], "little"), cubin.arch, pc)
                        for pc in range(0, len(k.text), 16)]
            except codec.DecodeError:
                continue
            assert highest_register(code) + 3 == k.regcount, f"{name} {k.name}"
            checked += 1
    assert checked >= len(CORPUS) // 2


def _without_tool_note(elf_text: str) -> str:
    """cuobjdump -elf with what the tool-identification note changes taken out: the note
    itself, its size and the file offsets of the sections after it."""
    out, skipping = [], False
    for line in elf_text.splitlines():
        if line.startswith(".section "):
            skipping = line.strip() == ".section .note.nv.tkinfo"
        if skipping:
            continue
        m = re.match(r"(\s+[0-9a-f]+)\s+[0-9a-f]+(\s.*)$", line)
        if m and re.search(r"\s\.\S+$", line):
            line = m.group(1) + m.group(2)              # drop the Offset column
            if line.endswith(".note.nv.tkinfo"):
                line = ".note.nv.tkinfo"
        out.append(line)
    return "\n".join(out)


def _outside_builder_scope(cubin) -> str | None:
    """What the builder cannot make yet (docs/cubin.md): in-text callees, external
    functions, debug info, pointer-valued constants (ptxas's string tables then name a
    `.rel.nv.constant3` it dropped)."""
    if any(cubin.local_functions(k) for k in cubin.kernels):
        return "in-text callees"
    known = {g.name for g in cubin.variables()}
    if not all(name in known for _, name, _, _ in cubin.bank_relocations(4)):
        return "external functions"
    if any(s.name.startswith((".debug_", ".nv_debug")) and s.name != ".debug_frame"
           for s in cubin.sections):
        return "debug info"
    if ".rel.nv.constant3" in (cubin.strtab or []):
        return "pointer-valued constants"
    return None


@pytest.mark.parametrize("name,item", CORPUS, ids=[n for n, _ in CORPUS])
def test_nvdisasm_listing_reassembles(name, item):
    """`nvdisasm -hex ptxas.cubin | ptx2sass-as`: the same cubin as cuobjdump -elf shows it,
    but for the tool-identification note, for kernels in the builder's scope."""
    data = _cubin(item)
    if data is None:
        pytest.skip("ptxas rejects this PTX for sm_89")
    cubin = read_cubin(data)
    for k in cubin.kernels:
        _reencoded_text(k.text, cubin.arch)          # xfails where the codec cannot read
    reason = _outside_builder_scope(cubin)
    if reason:
        pytest.skip(f"{reason}: the cubin builder does not make them yet")
    try:
        ours = assemble(oracle.nvdisasm(data), "sm_89", name)
    except AsmError as e:
        pytest.xfail(f"assembler: {e}")
    assert _without_tool_note(oracle.cuobjdump_elf(ours)) == \
        _without_tool_note(oracle.cuobjdump_elf(data))


RECURSIVE_FUNCTION = """.version 8.0
.target sm_89
.address_size 64
.func (.reg .b32 r) E(.reg .b32 a)
{
.reg .pred %p;
.reg .b32 %t;
setp.lt.u32 %p, a, 2;
@%p bra DONE;
sub.u32 %t, a, 1;
call (%t), E, (%t);
mul.lo.u32 a, a, %t;
DONE:
mov.b32 r, a;
ret;
}
.visible .entry k(.param .u64 out)
{
.reg .b64 %rd<3>;
.reg .b32 %r<3>;
ld.param.u64 %rd1, [out];
mov.u32 %r1, %tid.x;
call (%r2), E, (%r1);
st.global.u32 [%rd1], %r2;
ret;
}
"""


def test_return_relative_to_the_kernel_label_reassembles():
    """A callee kept in its kernel's section returns with `RET.REL.NODEC R20 \\`(k)`: the
    target is relative to the section's own function label, which the listing names
    only as the function (it was an undefined label)."""
    data = oracle.ptxas(RECURSIVE_FUNCTION).output
    listing = oracle.nvdisasm(data)
    assert "RET.REL.NODEC R20 `(k)" in listing
    ours = read_cubin(assemble(listing, "sm_89", "recursive.sass")).kernel("k").text
    theirs = read_cubin(data).kernel("k").text
    assert len(ours) == len(theirs)
    for pc in range(0, len(ours), 16):       # as text: STG's hidden descriptor register aside
        words = [int.from_bytes(t[pc:pc + 16], "little") for t in (ours, theirs)]
        assert codec.decode_text(words[0], "sm_89", pc) == codec.decode_text(words[1], "sm_89", pc)


@pytest.mark.parametrize("text", ["I2FP.F32.S32 R0, UR6", "I2FP.F32.U32 R5, UR4", "FFMA R9, R0, R9, UR4",
                                  "ISETP.GE.U32.AND.EX P0, PT, RZ, c[0x0][0x16c], PT, P0",
                                  "LEA.HI R0, R0, c[0x0][0x174], RZ, 0x5", "POPC R0, c[0x0][0x170]",
                                  # from tools/operand_kinds.py's random chains (seeds 400..999)
                                  "ULEA.HI UR4, UR4, UR5, URZ, 0x5", "I2FP.F32.S32.RZ R5, -0x1234562",
                                  "UIMAD.WIDE.U32.X UR4, UR8, 0xfedcba9, UR6, UP0", "SEL R8, R11, UR4, P0",
                                  "IDP.2A.LO.U16.S8 R7, R0, UR4, R7", "F2FP.F16.F32.PACK_AB R6, RZ, UR4",
                                  "F2F.F64.F32 R6, UR4", "SHF.R.U32 R7, R0, R7, UR4",
                                  # held-back chains 1114 and 1574 (tools/isa_seeds/uniform_imad.ptx,
                                  # f2f_uniform.ptx)
                                  "UIMAD UR4, UR4, UR4, -0x80000000", "F2F.F32.F64 R7, UR4"])
def test_forms_of_ptxas_listings_assemble(text):
    """Forms ptxas writes for ordinary kernels that re-assembling its listings refused
    ('no form takes these operands'): encoded, nvdisasm reads back the same text."""
    from ptx2sass.encoder.sass_text import parse_instruction
    word = codec.encode(parse_instruction(text), "sm_89", 0)
    run_ = oracle.nvdisasm_raw(word.to_bytes(16, "little"), "sm_89", ())
    assert run_.ok and text in re.sub(r"\s+;", ";", run_.stdout).replace(" ;", ";"), run_.stdout
