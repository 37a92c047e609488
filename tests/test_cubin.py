"""The cubin reader, writer and builder against ptxas 13.5's own files.

Expectations come from NVIDIA's tools: ptxas's cubins (read then written back must give the
same bytes; rebuilt from the kernel facts alone must give the same bytes), cuobjdump's and
nvdisasm's readings of ours, and cuobjdump's names for `.nv.info` attributes.

The zluda corpus runs in full (its ptxas runs are shared with test_corpus_zluda); the other
corpora and architectures sit behind `slow`, bounded by PTX2SASS_SAMPLE (default 12 files
per corpus; `all` = every file).
"""
from __future__ import annotations

import io
import os
import random
import re
import struct

import pytest
from elftools.elf.elffile import ELFFile

from ptx2sass import oracle
from ptx2sass.encoder.arch import ARCHS, UnknownArch, arch_info
from ptx2sass.encoder.cubin import (Cubin, CubinError, Kernel, read_cubin,
                                    write_cubin)
from ptx2sass.encoder.cubin_builder import (build_cubin, cfa_programs_of,
                                            default_cfa_program)
from ptx2sass.encoder.nvinfo import ATTRIBUTE_NAMES, KParam, NvInfoRecord
from tools.corpora import ptx_files

SAMPLE = os.environ.get("PTX2SASS_SAMPLE", "")


def _sample(files: list, n_default: int = 12) -> list:
    if SAMPLE == "all":
        return files
    n = int(SAMPLE) if SAMPLE.isdigit() else n_default
    return random.Random(1234).sample(files, min(n, len(files)))


def _compile(path, arch: str = "sm_89") -> bytes | None:
    run = oracle.ptxas(path.read_bytes(), arch, name=path.name)
    return run.output if run.ok else None


ZLUDA = ptx_files("zluda")

# What the corpora lack: several kernels, module variables of every kind (global, initialised,
# const, addresses in bank 4), launch bounds, barriers, %ctaid.z, a kernel without parameters,
# static shared memory, and a non-inlined .func.
FEATURES_PTX = r"""
.version 8.0
.target sm_75
.address_size 64
.global .align 4 .b8 gtable[256];
.global .align 4 .u32 ginit[4] = {1, 2, 3, 4};
.const .align 8 .f64 cvals[2] = {1.5, 2.5};
.shared .align 4 .b8 tile[512];
.func (.param .b32 r) helper(.param .b32 x)
{ .reg .b32 %r<3>; ld.param.u32 %r1, [x]; add.u32 %r2, %r1, 7; st.param.b32 [r], %r2; ret; }
.visible .entry k_req(.param .u64 p) .reqntid 64, 2, 1 .maxnreg 40
{
  .reg .b64 %rd<5>; .reg .b32 %r<6>;
  ld.param.u64 %rd1, [p]; cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, %ctaid.z; mov.u32 %r2, %ctaid.x; add.u32 %r3, %r1, %r2;
  mov.u64 %rd3, gtable; ld.global.u32 %r4, [%rd3+8];
  mov.u64 %rd4, ginit; ld.global.u32 %r5, [%rd4+4]; add.u32 %r3, %r3, %r4; add.u32 %r3, %r3, %r5;
  bar.sync 0; bar.sync 3; st.global.u32 [%rd2], %r3; ret;
}
.visible .entry k_none() { ret; }
.visible .entry k_max(.param .u32 a, .param .align 16 .b8 s[20], .param .u64 out) .maxntid 128
{
  .reg .b32 %r<4>; .reg .b64 %rd<3>; .reg .f64 %fd<2>;
  ld.param.u32 %r1, [a]; st.shared.u32 [tile], %r1; ld.const.f64 %fd1, [cvals+8];
  ld.param.u64 %rd1, [out]; cvta.to.global.u64 %rd2, %rd1;
  { .param .b32 x0; .param .b32 r0; st.param.b32 [x0], %r1;
    call.uni (r0), helper, (x0); ld.param.b32 %r2, [r0]; }
  st.global.u32 [%rd2], %r2; st.global.f64 [%rd2+8], %fd1; ret;
}
"""


def _features_cubin(arch: str = "sm_89", options: tuple[str, ...] = ()) -> bytes:
    run = oracle.ptxas(FEATURES_PTX, arch, options, name="features.ptx")
    assert run.ok, run.stderr
    return run.output


# Round trip ------------------------------------------------------------------------------

def _assert_round_trip(data: bytes) -> Cubin:
    cubin = read_cubin(data)
    out = write_cubin(cubin)
    again = read_cubin(out)
    for ours, theirs in zip(again.kernels, cubin.kernels):
        assert ours.text == theirs.text
    assert out == data, "rewritten cubin differs from ptxas's"
    return cubin


@pytest.mark.parametrize("path", ZLUDA, ids=lambda p: p.stem)
def test_zluda_cubins_round_trip_byte_identically(path):
    data = _compile(path)
    if data is None:
        pytest.skip("ptxas rejects this PTX for sm_89")
    _assert_round_trip(data)


@pytest.mark.parametrize("options", [(), ("-c",)], ids=["exec", "relocatable"])
def test_feature_cubin_round_trips(options):
    cubin = _assert_round_trip(_features_cubin(options=options))
    assert [k.name for k in cubin.kernels if k.is_entry] == ["k_max", "k_none", "k_req"]


@pytest.mark.parametrize("arch", sorted(ARCHS, key=lambda a: ARCHS[a].sm))
def test_every_arch_round_trips(arch):
    """Every architecture in the table, sm_100+ Mercury sections included."""
    _assert_round_trip(_features_cubin(arch))


@pytest.mark.slow
@pytest.mark.parametrize("corpus", ["tinygrad", "cuda"])
def test_other_corpora_round_trip(corpus):
    files = _sample(ptx_files(corpus))
    if not files:
        pytest.skip(f"corpus {corpus} has no PTX yet")
    for path in files:
        data = _compile(path)
        if data is not None:
            _assert_round_trip(data)


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"])
def test_corpora_round_trip_on_other_arches(arch):
    for corpus in ("zluda", "tinygrad", "cuda"):
        for path in _sample(ptx_files(corpus), 4):
            data = _compile(path, arch)
            if data is not None:   # PTX whose .target is above `arch` is rejected
                _assert_round_trip(data)


def test_default_layout_matches_ptxas():
    """With the recorded layout dropped (as for a cubin built from scratch), the writer's own
    section order, string tables and program headers still give ptxas's bytes."""
    for path in ZLUDA:
        data = _compile(path)
        if data is None:
            continue
        cubin = read_cubin(data)
        if not _buildable(cubin):
            continue  # in-text callees, external functions, pointer-valued constants
        for field in ("section_order", "shstrtab", "strtab", "segments", "shoff_align"):
            setattr(cubin, field, None)
        assert write_cubin(cubin) == data, path.name


# The reader's facts against cuobjdump's reading ---------------------------------------------

def _cuobjdump_facts(text: str) -> dict:
    facts = {"regcount": {}, "exits": {}, "params": {}}
    for name, count in re.findall(r"function: (\S+)\(0x[0-9a-f]+\)\tregister count: (\d+)", text):
        facts["regcount"][name] = int(count)
    for block in text.split("\n.nv.info.")[1:]:
        kname = block.split("\n", 1)[0].strip()
        m = re.search(r"EIATTR_EXIT_INSTR_OFFSETS\n\tFormat:\tEIFMT_SVAL\n\tValue:\t([^\n]*)", block)
        facts["exits"][kname] = [int(x, 16) for x in m.group(1).split()] if m else []
        facts["params"][kname] = sorted(
            (int(o, 16), int(off, 16), int(sz, 16)) for o, off, sz in re.findall(
                r"Ordinal : (0x[0-9a-f]+)\tOffset  : (0x[0-9a-f]+)\tSize    : (0x[0-9a-f]+)", block))
    return facts


@pytest.mark.parametrize("source", ["features", "add", "bar_red_and_pred", "atom_add"])
def test_decoded_facts_match_cuobjdump(source):
    if source == "features":
        data = _features_cubin()
    else:
        data = _compile(next(p for p in ZLUDA if p.stem == source))
    cubin = read_cubin(data)
    facts = _cuobjdump_facts(oracle.cuobjdump_elf(data))
    for k in cubin.kernels:
        assert k.regcount == facts["regcount"][k.name]
        assert k.exit_offsets == facts["exits"][k.name]
        assert sorted(k.params) == facts["params"][k.name]
        assert len(k.const0) == k.param_base + k.param_bytes


def test_attribute_names_match_cuobjdump():
    """Our attribute table names every code the way cuobjdump does: write each code as an
    HVAL record into a kernel's `.nv.info.<k>` and read cuobjdump's names back."""
    base = read_cubin(_compile(next(p for p in ZLUDA if p.stem == "add")))
    codes = sorted(ATTRIBUTE_NAMES)
    seen: dict[int, str] = {}
    for start in range(0, len(codes), 24):
        chunk = codes[start:start + 24]
        k = base.kernels[0]
        k.attributes = [NvInfoRecord(c, 3, 0) for c in chunk]
        k.exit_offsets, k.params = [], []
        text = oracle.cuobjdump_elf(write_cubin(base))
        part = text[text.index(f"\n.nv.info.{k.name}\n"):text.index("\n.nv.callgraph\n")]
        names = re.findall(r"Attribute:\t(\S+)", part)
        assert len(names) == len(chunk)
        seen.update(zip(chunk, names))
    assert {c: f"EIATTR_{n}" for c, n in ATTRIBUTE_NAMES.items()} == seen


# Building from scratch ------------------------------------------------------------------------

_BRANCH = re.compile(r"(?:@!?U?P\w+\s+)?(?:BRA|EXIT|RET|CALL|BRX|JMP|JMX|BREAK)\b")
_TARGET = re.compile(r"\b(?:BRA|BSSY|CALL\.REL\S*|BRX|JMP)\b[^;]*?\b(0x[0-9a-f]+)")


def _entry_block_end(k: Kernel, arch: str = "sm_89") -> int:
    """Where the entry basic block of ptxas's code ends, from nvdisasm's reading of the words
    alone (what our code generator knows about its own code): after the first branch, EXIT
    or call, or before the first branch target."""
    listing = oracle.nvdisasm_raw(k.text, arch, ()).stdout
    ins = [(int(o, 16), t.strip()) for o, t in re.findall(r"/\*([0-9a-f]{4})\*/\s+([^;]*);", listing)]
    targets = {int(t, 16) for _, text in ins for t in _TARGET.findall(text)}
    for off, text in ins:
        if off and off in targets:
            return off
        if _BRANCH.match(text):
            return off + 16
    return len(k.text)


def _facts(cubin: Cubin, with_frame_programs: bool, counts: dict | None = None) -> dict:
    """What a code generator knows about ptxas's kernels, taken out of ptxas's cubin.
    With `with_frame_programs`, kernels whose debug frame the builder cannot derive from
    their exits get the entry block's end, and failing that the CFA program itself."""
    kernels = []
    programs = cfa_programs_of(cubin)
    style = arch_info(cubin.arch).cubin_style
    for k in reversed(cubin.kernels):  # back to PTX order
        fresh = Kernel(
            name=k.name, text=k.text, is_entry=k.is_entry, regcount=k.regcount,
            regcount_attribute=k.regcount_attribute,
            barcount=k.barcount, shared_bytes=k.shared_bytes, shared_align=k.shared_align,
            const2=k.const2, param_base=k.param_base, params=k.params,
            exit_offsets=k.exit_offsets, max_threads=k.max_threads, reqntid=k.reqntid,
            maxreg_count=k.maxreg_count, ctaidz_used=k.ctaidz_used,
            crs_stack_size=k.crs_stack_size, frame_size=k.frame_size,
            min_stack_size=k.min_stack_size, max_stack_size=k.max_stack_size,
            extra_attributes=k.extra_attributes,
            shared_window="rela" in (k.reloc_kinds or ()) and not k.relocations)
        counts = counts if counts is not None else {}
        if with_frame_programs and not programs[k.name].startswith(default_cfa_program(fresh, style)):
            fresh.entry_block_end = _entry_block_end(fresh, cubin.arch)
            if programs[k.name].startswith(default_cfa_program(fresh, style)):
                counts["entry_block"] = counts.get("entry_block", 0) + 1
            else:
                fresh.cfa_program = programs[k.name]
                counts["explicit"] = counts.get("explicit", 0) + 1
        kernels.append(fresh)
    globals_ = cubin.variables()
    bank4 = [name for _, name, _, _ in sorted(cubin.bank_relocations(4))]
    facts = {"kernels": kernels, "globals_": globals_, "bank4": bank4,
             "ptx_target": f"sm_{cubin.cuinfo.virtual_sm}"}
    compat = [s for s in cubin.sections if s.name == ".nv.compat"]
    if compat:      # sm_90: the ISA class the code needs (what the code generator decides)
        facts["isa_class"] = compat[0].data[COMPAT_ISA_CLASS_BYTE]
    return facts


COMPAT_ISA_CLASS_BYTE = 10


def _buildable(cubin: Cubin) -> bool:
    """Within the builder's scope: no in-text callees, external functions, debug info or
    pointer-valued constants."""
    known = {g.name for g in cubin.variables()}
    debug_info = any(s.name.startswith((".debug_", ".nv_debug")) and s.name != ".debug_frame"
                     for s in cubin.sections)
    return (not debug_info and not any(cubin.local_functions(k) for k in cubin.kernels)
            and all(name in known for _, name, _, _ in cubin.bank_relocations(4))
            and ".rel.nv.constant3" not in (cubin.strtab or []))


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_builder_reproduces_ptxas_for_zluda(arch):
    """Every zluda kernel ptxas did not give in-text callees or pointer-valued constants:
    rebuilt from its facts alone, the cubin equals ptxas's byte for byte (sm_90: the
    `.nv.compat` table, reserved shared memory, records and layout of Hopper cubins)."""
    built, counts = 0, {}
    for path in ZLUDA:
        data = _compile(path, arch)
        if data is None:
            continue
        theirs = read_cubin(data)
        if not _buildable(theirs):
            continue
        facts = _facts(theirs, with_frame_programs=True, counts=counts)
        ours = write_cubin(build_cubin(arch, toolkit=theirs.tkinfo, **facts))
        assert ours == data, path.name
        built += 1
    # Nearly all debug frames follow from the exits or the entry block's end; only the few
    # with stack frames, MEMBAR.SC or call sequences need the explicit program.
    assert built >= 160 and counts.get("explicit", 0) <= 8, (built, counts)


def _normalise(listing: str) -> str:
    """cuobjdump -elf without the tool-identification note and the offsets it shifts."""
    listing = re.sub(r"\n\.section \.note\.nv\.tkinfo\n.*?(?=\n\n\.section)", "", listing, flags=re.S)
    rows = []
    for line in listing.splitlines():
        cols = line.split()
        if len(cols) == 10 and re.fullmatch(r"[0-9a-f]+", cols[0]) and cols[-1].startswith("."):
            # Section table row: drop the file offset, and the note's size.
            cols = cols[:1] + cols[2:]
            if cols[-1] == ".note.nv.tkinfo":
                cols = cols[:1] + cols[2:]
            line = " ".join(cols)
        rows.append(line)
    return "\n".join(rows)


@pytest.mark.parametrize("name", ["add", "bar_red_and_pred", "shared_variable", "global_array"])
def test_builder_with_own_identity_reads_like_ptxas(name):
    """A cubin that names ptx2sass as its writer: cuobjdump shows the same file apart from
    the tool note, and nvdisasm the same code listing (with every word in hex)."""
    data = _compile(next(p for p in ZLUDA if p.stem == name))
    facts = _facts(read_cubin(data), with_frame_programs=True)
    ours = write_cubin(build_cubin("sm_89", **facts))
    assert read_cubin(ours).tkinfo.tool_name == "ptx2sass"
    assert _normalise(oracle.cuobjdump_elf(ours)) == _normalise(oracle.cuobjdump_elf(data))
    assert oracle.nvdisasm(ours, ("-c", "-hex")) == oracle.nvdisasm(data, ("-c", "-hex"))


def test_builder_reproduces_feature_kernels_without_callees():
    """Multi-kernel module with every variable kind, launch bounds, barriers and %ctaid.z:
    the PTX minus the .func call, rebuilt from facts, equals ptxas's file."""
    ptx = re.sub(r"\{ \.param .*?\}", "add.u32 %r2, %r1, 7;", FEATURES_PTX, flags=re.S)
    assert "call.uni" not in ptx
    run = oracle.ptxas(ptx, "sm_89", name="features.ptx")
    assert run.ok, run.stderr
    theirs = read_cubin(run.output)
    assert _buildable(theirs)
    facts = _facts(theirs, with_frame_programs=True)
    assert {g.name for g in facts["globals_"]} == {"gtable", "ginit", "cvals"}
    assert write_cubin(build_cubin("sm_89", toolkit=theirs.tkinfo, **facts)) == run.output


@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_86", "sm_87"])
def test_builder_reproduces_feature_kernels_on_older_arches(arch):
    """The same family's per-arch details (workaround records, e_flags) come from arch.py."""
    ptx = re.sub(r"\{ \.param .*?\}", "add.u32 %r2, %r1, 7;", FEATURES_PTX, flags=re.S)
    run = oracle.ptxas(ptx, arch, name="features.ptx")
    assert run.ok, run.stderr
    theirs = read_cubin(run.output)
    facts = _facts(theirs, with_frame_programs=True)
    assert write_cubin(build_cubin(arch, toolkit=theirs.tkinfo, **facts)) == run.output


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_86"])
def test_builder_reproduces_ptxas_on_older_arches(arch):
    for corpus in ("zluda", "cuda"):
        for path in _sample(ptx_files(corpus)):
            data = _compile(path, arch)
            if data is None or not _buildable(read_cubin(data)):
                continue
            theirs = read_cubin(data)
            facts = _facts(theirs, with_frame_programs=True)
            assert write_cubin(build_cubin(arch, toolkit=theirs.tkinfo, **facts)) == data, path.name


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["sm_90", "sm_90a"])
def test_builder_reproduces_ptxas_on_hopper(arch):
    """sm_90 (and `-arch=sm_90a`: ACCELERATOR_TARGET in `.nv.compat`) from the kernel facts,
    byte for byte, on the cuda corpus and a tinygrad sample."""
    for corpus in ("cuda", "tinygrad"):
        for path in _sample(ptx_files(corpus)):
            data = _compile(path, arch)
            if data is None or not _buildable(read_cubin(data)):
                continue
            theirs = read_cubin(data)
            facts = _facts(theirs, with_frame_programs=True)
            assert write_cubin(build_cubin(arch, toolkit=theirs.tkinfo, **facts)) == data, path.name


def test_builder_reproduces_feature_kernels_on_hopper():
    ptx = re.sub(r"\{ \.param .*?\}", "add.u32 %r2, %r1, 7;", FEATURES_PTX, flags=re.S)
    run = oracle.ptxas(ptx, "sm_90", name="features.ptx")
    assert run.ok, run.stderr
    theirs = read_cubin(run.output)
    facts = _facts(theirs, with_frame_programs=True)
    assert write_cubin(build_cubin("sm_90", toolkit=theirs.tkinfo, **facts)) == run.output


@pytest.mark.slow
def test_builder_reproduces_ptxas_for_tinygrad_sample():
    for path in _sample(ptx_files("tinygrad")):
        data = _compile(path)
        if data is None or not _buildable(read_cubin(data)):
            continue
        theirs = read_cubin(data)
        facts = _facts(theirs, with_frame_programs=True)
        assert write_cubin(build_cubin("sm_89", toolkit=theirs.tkinfo, **facts)) == data, path.name


def test_builder_minimal_kernel_disassembles():
    """A hand-made kernel (EXIT, BRA-to-self, NOP padding taken from ptxas's words) loads in
    both tools with our metadata."""
    add = read_cubin(_compile(next(p for p in ZLUDA if p.stem == "add"))).kernels[0]
    exit_word = add.text[add.exit_offsets[0]:add.exit_offsets[0] + 16]
    tail = add.text[add.exit_offsets[0] + 16:add.exit_offsets[0] + 48]   # BRA self, NOP
    nop = tail[16:]
    text = exit_word + tail[:16] + nop * 6
    k = Kernel("tiny", text, regcount=8, params=[(0, 0, 8)], exit_offsets=[0])
    data = write_cubin(Cubin.for_kernels("sm_89", [k]))
    listing = oracle.nvdisasm(data, ("-c",))
    assert "EXIT" in listing and ".text.tiny" in listing
    elf = oracle.cuobjdump_elf(data)
    assert "function: tiny(0x" in elf and "register count: 8" in elf
    assert "Ordinal : 0x0\tOffset  : 0x0\tSize    : 0x8" in elf


# Arch facts -------------------------------------------------------------------------------------

@pytest.mark.parametrize("arch", sorted(ARCHS, key=lambda a: ARCHS[a].sm))
def test_arch_table_matches_ptxas(arch):
    info = arch_info(arch)
    cubin = read_cubin(_features_cubin(arch))
    assert cubin.e_flags == info.e_flags
    assert cubin.arch == arch
    k = cubin.kernel("k_max")
    assert k.param_base == info.param_base
    assert len(k.const0) == info.param_base + k.param_bytes
    # `.text.<k>` sh_info: `regcount << 24 | symbol` before sm_90, the bare symbol after.
    elf = ELFFile(io.BytesIO(_features_cubin(arch)))
    sh_info = elf.get_section_by_name(".text.k_max")["sh_info"]
    symbol = cubin.kernel_symbol_index(k)
    regcount = next(r.u32s()[1] for r in cubin.module_attributes
                    if r.name == "REGCOUNT" and r.u32s()[0] == symbol)
    expected = (regcount << 24 | symbol) if info.regcount_in_text_info else symbol
    assert sh_info == expected


@pytest.mark.parametrize("change, message", [
    (dict(text=b"\0" * 20), "16-byte words"),
    (dict(regcount=300), "register count"),
    (dict(params=[(0, 0, 8), (2, 8, 8)]), "ordinals"),
    (dict(exit_offsets=[0x1000]), "inside the text"),
    (dict(param_base=0x210), "param_base"),
])
def test_builder_rejects_impossible_facts(change, message):
    base = dict(name="k", text=bytes(128), regcount=8, params=[(0, 0, 8)], exit_offsets=[0])
    with pytest.raises(CubinError, match=message):
        build_cubin("sm_89", [Kernel(**{**base, **change})])


def test_builder_leaves_its_input_alone():
    k = Kernel("k", bytes(128), regcount=8, params=[(0, 0, 8)], exit_offsets=[0])
    build_cubin("sm_89", [k])
    assert k.attributes is None and k.const0 is None


def test_unknown_arch_is_a_clear_error():
    with pytest.raises(UnknownArch, match="sm_42"):
        arch_info("sm_42")
    with pytest.raises(CubinError, match="sm_42"):
        build_cubin("sm_42", [])


# Consistency and bad input ---------------------------------------------------------------------

def test_stale_regcount_is_refused_and_consistent_edit_is_written():
    data = _compile(next(p for p in ZLUDA if p.stem == "add"))
    cubin = read_cubin(data)
    k = cubin.kernels[0]
    k.regcount += 6
    with pytest.raises(CubinError, match="REGCOUNT"):
        write_cubin(cubin)
    sym = cubin.kernel_symbol_index(k)
    cubin.module_attributes = [
        NvInfoRecord.words("REGCOUNT", sym, k.regcount)
        if r.name == "REGCOUNT" and r.u32s()[0] == sym else r for r in cubin.module_attributes]
    out = write_cubin(cubin)
    assert f"register count: {k.regcount}" in oracle.cuobjdump_elf(out)
    assert read_cubin(out).kernels[0].regcount == k.regcount


def test_stale_params_are_refused():
    cubin = read_cubin(_compile(next(p for p in ZLUDA if p.stem == "add")))
    cubin.kernels[0].params.append((2, 16, 4))
    with pytest.raises(CubinError, match="KPARAM_INFO"):
        write_cubin(cubin)


@pytest.mark.parametrize("blob, message", [
    (b"", "not an ELF"), (b"hello world" * 10, "not an ELF"),
    (b"\x7fELF\x01\x01\x01" + bytes(60), "64-bit"),
])
def test_not_a_cubin(blob, message):
    with pytest.raises(CubinError, match=message):
        read_cubin(blob)


def test_wrong_machine():
    data = bytearray(_compile(next(p for p in ZLUDA if p.stem == "add")))
    struct.pack_into("<H", data, 18, 62)   # EM_X86_64
    with pytest.raises(CubinError, match="EM_CUDA"):
        read_cubin(bytes(data))


def test_truncated_cubins_give_cubin_errors():
    data = _compile(next(p for p in ZLUDA if p.stem == "add"))
    for cut in list(range(0, len(data), 97)) + [len(data) - 1]:
        with pytest.raises(CubinError):
            read_cubin(data[:cut])


def test_corrupt_nv_info_is_a_cubin_error():
    data = bytearray(_compile(next(p for p in ZLUDA if p.stem == "add")))
    cubin = read_cubin(bytes(data))
    # The first `.nv.info.add` record is SVAL LANGUAGE: claim a payload past the section end.
    at = bytes(data).index(bytes([4, 0x66, 4, 0]))
    struct.pack_into("<H", data, at + 2, 0x4000)
    with pytest.raises(CubinError, match="claims"):
        read_cubin(bytes(data))
    assert cubin.kernels[0].name == "add"


def test_random_corruption_never_escapes_as_another_exception():
    """Damaged files either read (and then write, or are refused) or raise CubinError."""
    files = [_compile(next(p for p in ZLUDA if p.stem == "add")), _features_cubin(),
             _features_cubin("sm_120")]
    rng = random.Random(7)
    for _ in range(400):
        mutated = bytearray(rng.choice(files))
        for _ in range(rng.randint(1, 4)):
            if rng.random() < 0.5:
                mutated[rng.randrange(len(mutated))] = rng.randrange(256)
            else:   # large or boundary words where sizes, offsets and alignments live
                at = rng.randrange(len(mutated) - 4)
                mutated[at:at + 4] = rng.choice([b"\xff\xff\xff\xff", bytes(4), b"\0\x10\0\0"])
        try:
            write_cubin(read_cubin(bytes(mutated)))
        except CubinError:
            pass


def test_kparam_record_layout():
    """KPARAM_INFO as cuobjdump reads it: a 20-byte parameter at 0x10 is size 0x14."""
    rec = KParam(ordinal=1, offset=0x10, size=20).record()
    assert rec.payload == bytes.fromhex("000000000100100000f05100")
