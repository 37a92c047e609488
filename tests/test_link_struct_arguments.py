"""Struct (`.param .align A .b8 x[N]`) arguments and results in the link-time calling
convention (ptx2sass/abi.py, `Struct`, `link_layout`): a struct travels whole, its words
from a register aligned to A/4, first-fit among R4..R15 like the scalars, or entirely on
the stack at an offset aligned to max(A, 4); never split. Checked against the pinned
ptxas two ways, as tests/test_link_stack_arguments.py does: where each argument word of a
caller's call goes (traced off nvdisasm), and nvlink-linked programs (our caller with
ptxas's callee and the other way round) run in the emulator against a Python reference;
the `.nv.prototype` string too (nvlink compares it)."""
from __future__ import annotations

import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.emu.launch import run
from test_link_stack_arguments import _header, _nvlink, _ours_c, _ptxas_c, call_layout

S = tuple        # ("s", size in bytes, align): a struct argument

T12 = ["b32"] * 12
SIGNATURES = {
    # R4, R6..R8, R12:R13, R5, R9 (measured: the b32 back-fills R5, the A=16 struct takes R12)
    "mixed": ["b32", ("s", 12, 8), ("s", 8, 16), "b32", ("s", 4, 4)],
    # R4, [R1..0x50), R5: the whole struct on the stack, the next b32 back in a register
    "stack": ["b32", ("s", 80, 4), "b32"],
    # 9 words, then a 4-word struct that would cross R15: on the stack; the b32s R13, R14
    "crossing": ["b32"] * 9 + [("s", 16, 4), "b32", "b32"],
    # registers full: [R1], the A=16 struct at [R1+0x10], the b64 after it at [R1+0x20]
    "a16_stack": T12 + ["b32", ("s", 16, 16), "b64"],
    # the area rounded to the struct's 16: 0x14 -> 0x20
    "a16_first": T12 + [("s", 16, 16), "b32"],
    "b64s": ["b64", ("s", 24, 8), "b32", ("s", 8, 8), "b64"],
}
RUN_SIGNATURES = dict(SIGNATURES, tail=["b32", ("s", 6, 4), "b32", ("s", 10, 8), "b32"])


def _slots(types) -> list[tuple[str, int]]:
    """(PTX type, argument index) per value word the caller loads, in order."""
    out = []
    for k, ty in enumerate(types):
        if isinstance(ty, tuple):
            size = ty[1]
            out += [("b32", k)] * (size // 4) + ([("b16", k)] if size % 4 else [])
        else:
            out.append((ty, k))
    return out


def _sig(types, prefix="a") -> str:
    return ", ".join(f".param .align {t[2]} .b8 {prefix}{k}[{t[1]}]" if isinstance(t, tuple)
                     else f".param .{t} {prefix}{k}" for k, t in enumerate(types))


def _ret(ret) -> str:
    return f".param .align {ret[2]} .b8 r[{ret[1]}]" if isinstance(ret, tuple) else f".param .{ret} r"


def callee_ptx(types, ret="b32", name="f") -> str:
    """f(...): s = s * 3 + w over every value word (structs word by word, a 2-byte tail as
    u16), as u64; returned as `ret` (a struct result: its low then high word)."""
    body = ["  .reg .u64 %s, %t; .reg .b32 %q; .reg .b16 %h;", "  mov.u64 %s, 0;"]
    offsets: dict[int, int] = {}
    for ty, k in _slots(types):
        o = offsets.get(k, 0)
        offsets[k] = o + 4
        at = f"[a{k}+{o}]" if isinstance(types[k], tuple) else f"[a{k}]"
        if ty == "b64":
            body.append(f"  ld.param.b64 %t, {at};")
        elif ty == "b16":
            body.append(f"  ld.param.b16 %h, {at}; cvt.u64.u16 %t, %h;")
        else:
            body.append(f"  ld.param.b32 %q, {at}; cvt.u64.u32 %t, %q;")
        body.append("  mad.lo.u64 %s, %s, 3, %t;")
    if isinstance(ret, tuple):
        body.append("  { .reg .b32 %lo, %hi; mov.b64 {%lo, %hi}, %s; st.param.b32 [r], %lo; st.param.b32 [r+4], %hi;")
        body += [f"    add.u32 %q, %lo, {k}; st.param.b32 [r+{4 * k}], %q;" for k in range(2, ret[1] // 4)]
        body.append("  }")
    elif ret == "b64":
        body.append("  st.param.b64 [r], %s;")
    else:
        body.append("  cvt.u32.u64 %q, %s; st.param.b32 [r], %q;")
    return f".visible .func ({_ret(ret)}) {name}({_sig(types)})\n{{\n" + "\n".join(body) + "\n  ret;\n}\n"


def caller_ptx(types, ret="b32", name="f") -> str:
    """Kernel k(p): value word j loaded from p + 8j; f's result stored to p[0] (64 bits for
    a b64 or struct result)."""
    body = [".visible .entry k(.param .u64 p)", "{", "  .reg .u64 %p, %res; ld.param.u64 %p, [p];", "  {"]
    for k, ty in enumerate(types):
        if isinstance(ty, tuple):
            body.append(f"  .param .align {ty[2]} .b8 a{k}[{ty[1]}];")
        else:
            body.append(f"  .param .{ty} a{k};")
    offsets: dict[int, int] = {}
    for j, (ty, k) in enumerate(_slots(types)):
        o = offsets.get(k, 0)
        offsets[k] = o + 4
        at = f"[a{k}+{o}]" if isinstance(types[k], tuple) else f"[a{k}]"
        body.append(f"  {{ .reg .{ty} %v; ld.global.{ty} %v, [%p+{8 * j}]; st.param.{ty} {at}, %v; }}")
    args = ", ".join(f"a{k}" for k in range(len(types)))
    if isinstance(ret, tuple):
        body += [f"  {_ret(ret)}; call.uni (r), {name}, ({args});",
                 "  { .reg .b32 %lo, %hi; ld.param.b32 %lo, [r]; ld.param.b32 %hi, [r+4]; mov.b64 %res, {%lo, %hi}; }"]
        if ret[1] > 8:      # the other words' sum to p[1]
            body += ["  { .reg .b32 %w, %sum; mov.b32 %sum, 0;"]
            body += [f"    ld.param.b32 %w, [r+{4 * k}]; add.u32 %sum, %sum, %w;" for k in range(2, ret[1] // 4)]
            body += ["    st.global.u32 [%p+8], %sum; }"]
    elif ret == "b64":
        body += [f"  {_ret(ret)}; call.uni (r), {name}, ({args}); ld.param.b64 %res, [r];"]
    else:
        body += [f"  {_ret(ret)}; call.uni (r), {name}, ({args});",
                 "  { .reg .b32 %q; ld.param.b32 %q, [r]; cvt.u64.u32 %res, %q; }"]
    body += ["  }", "  st.global.u64 [%p], %res;", "  ret;", "}"]
    return "\n".join(body) + "\n"


def declaration(types, ret="b32", name="f") -> str:
    return f".extern .func ({_ret(ret)}) {name}({_sig(types)});\n"


def reference(types, data: np.ndarray, ret) -> int:
    s = 0
    for j, (ty, _) in enumerate(_slots(types)):
        v = int(data[j]) & ((1 << int(ty[1:])) - 1)
        s = (s * 3 + v) & (2 ** 64 - 1)
    return s if ret == "b64" or isinstance(ret, tuple) else s & 0xFFFFFFFF


def _expected_words(types) -> set[int]:
    out = set()
    for j, (ty, _) in enumerate(_slots(types)):
        out.add(8 * j)
        if ty == "b64":
            out.add(8 * j + 4)
    return out


@pytest.mark.parametrize("name, arch", [(n, "sm_89") for n in SIGNATURES]
                         + [(n, "sm_100") for n in ("mixed", "a16_stack")] + [("stack", "sm_90")])
def test_struct_call_layout_is_ptxas(name, arch):
    """Every word of the call's arguments, struct words included, sits where ptxas's
    caller puts it; the frame is ptxas's too."""
    types = SIGNATURES[name]
    ptx = _header(arch) + declaration(types) + caller_ptx(types)
    theirs, their_frame = call_layout(_ptxas_c(ptx, arch))
    ours, our_frame = call_layout(_ours_c(ptx, arch))
    assert set(theirs) == _expected_words(types)
    assert ours == theirs
    assert our_frame == their_frame


def _prototype(cubin: bytes) -> bytes:
    import re
    return sorted(set(re.findall(rb"#[a-z0-9]+", cubin)))


@pytest.mark.parametrize("ret", ["b32", ("s", 8, 4)])
def test_struct_prototypes_are_ptxas(ret):
    """`.nv.prototype` of a struct signature, declared (caller) and defined (link target):
    ptxas's string (`b<size>` per struct, whatever its alignment)."""
    types = SIGNATURES["mixed"] + [("s", 6, 2)]
    arch = "sm_89"
    caller = _header(arch) + declaration(types, ret) + caller_ptx(types, ret)
    callee = _header(arch) + callee_ptx(types, ret)
    for ptx in (caller, callee):
        want = [p for p in _prototype(_ptxas_c(ptx, arch)) if b"b6" in p]
        assert want and [p for p in _prototype(_ours_c(ptx, arch)) if b"b6" in p] == want


def _data(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 1 << 64, max(n, 2), dtype=np.uint64)


@pytest.mark.parametrize("caller_by, callee_by", [("ours", "ptxas"), ("ptxas", "ours")])
@pytest.mark.parametrize("name, ret, arch", [("mixed", "b32", "sm_89"), ("stack", "b32", "sm_89"),
                                             ("crossing", "b32", "sm_100"), ("a16_stack", "b64", "sm_89"),
                                             ("b64s", ("s", 8, 4), "sm_89"), ("tail", ("s", 8, 8), "sm_90")])
def test_struct_arguments_link_and_run(name, ret, arch, caller_by, callee_by, tmp_path):
    """Our caller with ptxas's callee and ptxas's caller with ours, linked by nvlink (which
    also compares the two `.nv.prototype` strings), run in the emulator."""
    types = RUN_SIGNATURES[name]
    build = {"ours": _ours_c, "ptxas": _ptxas_c}
    linked = _nvlink(build[caller_by](_header(arch) + declaration(types, ret) + caller_ptx(types, ret), arch),
                     build[callee_by](_header(arch) + callee_ptx(types, ret), arch), tmp_path=tmp_path, arch=arch)
    data = _data(len(_slots(types)), sum(map(ord, name)))
    want = reference(types, data, ret)
    res = run(linked, "k", (1, 1, 1), (1, 1, 1), [data], hazard_check=True)
    assert not res.hazards
    got = int(data[0]) if ret == "b64" or isinstance(ret, tuple) else int(data[0]) & 0xFFFFFFFF
    assert got == want


@pytest.mark.parametrize("arch", ["sm_89"])
def test_own_struct_link_target_in_one_module(arch, tmp_path):
    """-c: our `.visible .func` with struct parameters called in its own module (both sides
    ours, through the link convention)."""
    types = RUN_SIGNATURES["tail"] + [("s", 40, 4)]
    ptx = _header(arch) + callee_ptx(types, ("s", 8, 4)) + caller_ptx(types, ("s", 8, 4))
    linked = _nvlink(_ours_c(ptx, arch), tmp_path=tmp_path, arch=arch)
    data = _data(len(_slots(types)), 5)
    want = reference(types, data, ("s", 8, 4))
    res = run(linked, "k", (1, 1, 1), (1, 1, 1), [data], hazard_check=True)
    assert not res.hazards
    assert int(data[0]) == want


BIG = ("s", 52, 4)      # 13 words: returned through memory (the buffer's address in R4)
# tools/link_struct_sweep seed 250: the buffer at the stack arguments' unrounded end (R4 =
# R1 + 0x4c), the area then rounded to the 16 of the struct on the stack (0x80)
SEED250 = ["b32", "b32", "b64", "b64", "b64", ("s", 32, 8), "b32", "b32", "b64", "b64", "b64", "b64", ("s", 12, 16)]


@pytest.mark.parametrize("caller_by, callee_by", [("ours", "ptxas"), ("ptxas", "ours"), ("ours", "ours")])
@pytest.mark.parametrize("types, arch", [(["b32", "b64"], "sm_89"), (T12 + [("s", 12, 8), "b32"], "sm_100"),
                                         (SEED250, "sm_89")])
def test_struct_result_through_memory_links_and_runs(types, arch, caller_by, callee_by, tmp_path):
    """A 13-word struct result: the caller's buffer address in R4, the arguments from R5
    (and the stack), the callee's STLs through it, read back by the caller."""
    build = {"ours": _ours_c, "ptxas": _ptxas_c}
    linked = _nvlink(build[caller_by](_header(arch) + declaration(types, BIG) + caller_ptx(types, BIG), arch),
                     build[callee_by](_header(arch) + callee_ptx(types, BIG), arch), tmp_path=tmp_path, arch=arch)
    data = _data(len(_slots(types)), 9)
    want = reference(types, data, BIG)
    res = run(linked, "k", (1, 1, 1), (1, 1, 1), [data], hazard_check=True)
    assert not res.hazards
    assert int(data[0]) == want
    lo = want & 0xFFFFFFFF
    assert int(data[1]) & 0xFFFFFFFF == sum(lo + k for k in range(2, 13)) & 0xFFFFFFFF


# results through memory aligned to more than 4 (branch cli29, measured): the buffer at the
# stack arguments' end rounded up to the result's alignment, the area rounded to it too
BIG8, BIG16 = ("s", 56, 8), ("s", 64, 16)
ALIGNED_RESULTS = [(["b32", "b64"], BIG8, "sm_89"), (["b32", "b64"], BIG16, "sm_89"),
                   (T12 + ["b32"], BIG8, "sm_89"), (T12 + ["b32"], BIG16, "sm_89"),
                   (T12 + ["b32", ("s", 8, 8)], ("s", 52, 16), "sm_89"), (T12 + ["b32"], BIG16, "sm_100"),
                   (SEED250, BIG16, "sm_90")]


@pytest.mark.parametrize("types, ret, arch", ALIGNED_RESULTS)
def test_aligned_result_through_memory_layout_is_ptxas(types, ret, arch):
    """R4 = the buffer at the stack arguments' end rounded up to the result's alignment
    (`IADD3 R4, R1, 0x10` after 8 bytes for a 16-aligned result), the frame rounded to it."""
    ptx = _header(arch) + declaration(types, ret) + caller_ptx(types, ret)
    theirs, their_frame = call_layout(_ptxas_c(ptx, arch))
    ours, our_frame = call_layout(_ours_c(ptx, arch))
    assert set(theirs) == _expected_words(types)
    assert ours == theirs
    assert our_frame == their_frame
    assert _buffer_offset(_ours_c(ptx, arch)) == _buffer_offset(_ptxas_c(ptx, arch))


def _buffer_offset(cubin: bytes) -> int:
    """The offset from R1 that the caller passes in R4 (0: `MOV R4, R1`)."""
    import re
    text = oracle.nvdisasm(cubin, ())
    m = re.search(r"(?:IADD3 R4, (?:PT, PT, )?R1|VIADD R4, R1), (0x[0-9a-f]+)\b|MOV(?:\.U32)? R4, (?:RZ, RZ, )?R1 ;",
                  text)
    assert m, text
    return int(m[1], 16) if m[1] else 0


@pytest.mark.parametrize("caller_by, callee_by", [("ours", "ptxas"), ("ptxas", "ours"), ("ours", "ours")])
@pytest.mark.parametrize("types, ret, arch", [ALIGNED_RESULTS[i] for i in (0, 3, 4, 5)])
def test_aligned_result_through_memory_links_and_runs(types, ret, arch, caller_by, callee_by, tmp_path):
    build = {"ours": _ours_c, "ptxas": _ptxas_c}
    linked = _nvlink(build[caller_by](_header(arch) + declaration(types, ret) + caller_ptx(types, ret), arch),
                     build[callee_by](_header(arch) + callee_ptx(types, ret), arch), tmp_path=tmp_path, arch=arch)
    data = _data(len(_slots(types)), 13)
    want = reference(types, data, ret)
    res = run(linked, "k", (1, 1, 1), (1, 1, 1), [data], hazard_check=True)
    assert not res.hazards
    assert int(data[0]) == want
    lo = want & 0xFFFFFFFF
    assert int(data[1]) & 0xFFFFFFFF == sum(lo + k for k in range(2, ret[1] // 4)) & 0xFFFFFFFF


@pytest.mark.parametrize("types, arch", [(["b32", "b64", ("s", 8, 8)] + ["b32"] * 6, "sm_89"),
                                         (SEED250, "sm_89"), (SEED250, "sm_100")])
def test_struct_result_through_memory_layout_is_ptxas(types, arch):
    """Where the argument words go beside a result through memory (from R5), and the frame
    (the buffer after the stack arguments)."""
    ptx = _header(arch) + declaration(types, BIG) + caller_ptx(types, BIG)
    theirs, their_frame = call_layout(_ptxas_c(ptx, arch))
    ours, our_frame = call_layout(_ours_c(ptx, arch))
    assert set(theirs) == _expected_words(types)
    assert ours == theirs
    assert our_frame == their_frame


def _local_accesses(cubin: bytes, kernel: str = "k") -> list[tuple[str, int]]:
    """(STL/LDL with its width, offset from R1) of every stack access in the kernel."""
    import re
    text = oracle.nvdisasm(cubin, ()).split(f".text.{kernel}:", 1)[1]
    return sorted((m[1], int(m[2] or "0", 16))
                  for m in re.finditer(r"\b((?:STL|LDL)(?:\.64|\.128)?) (?:R\d+, )?\[R1(?:\+(0x[0-9a-f]+))?\]", text))


# stack words as ptxas stores them (branch cli29, measured): consecutive words merged into
# STL.64 at multiples of 8, STL.128 at multiples of 16 where the area is 16-aligned (a
# 16-aligned struct on the stack or result), across arguments; result words read back alike
VECTOR_SIGNATURES = [
    (["b32", ("s", 80, 4), "b32"], "b32"), (T12 + [("s", 32, 4)], "b32"),
    (T12 + ["b32", ("s", 32, 4)], "b32"), (T12 + ["b32", ("s", 32, 8)], "b32"),
    (T12 + ["b32", ("s", 32, 16)], "b32"), (T12 + ["b32"] * 3, "b32"), (T12 + ["b64", "b64"], "b32"),
    (T12 + ["b32"] * 3, BIG16), (T12 + ["b32"] * 3, ("s", 52, 8)), (T12 + ["b32"], BIG8),
    (["b32", "b64"], BIG), (["b32", "b64"], BIG16), (SEED250, BIG),
    # tools.link_struct_sweep --aligned seed 212: a 16-aligned struct's tail, then a b64 on
    # the stack: two STL.64, never one STL.128 (64-bit scalars merge only with each other)
    (["b64", "b32", "b64", "b32", "b32", ("s", 12, 8), ("s", 24, 16), "b64"] + ["b32"] * 4 + [("s", 4, 4)], BIG),
]


@pytest.mark.parametrize("arch", ["sm_89", "sm_100"])
@pytest.mark.parametrize("types, ret", VECTOR_SIGNATURES)
def test_stack_words_merged_as_ptxas(types, ret, arch):
    if arch == "sm_100" and VECTOR_SIGNATURES.index((types, ret)) % 3:
        pytest.skip("(a third of the signatures on sm_100)")
    ptx = _header(arch) + declaration(types, ret) + caller_ptx(types, ret)
    assert _local_accesses(_ours_c(ptx, arch)) == _local_accesses(_ptxas_c(ptx, arch))


@pytest.mark.parametrize("caller_by, callee_by", [("ours", "ptxas"), ("ptxas", "ours")])
@pytest.mark.parametrize("types, ret", [VECTOR_SIGNATURES[i] for i in (0, 4, 7, 9)])
def test_merged_stack_words_link_and_run(types, ret, caller_by, callee_by, tmp_path):
    arch = "sm_89"
    build = {"ours": _ours_c, "ptxas": _ptxas_c}
    linked = _nvlink(build[caller_by](_header(arch) + declaration(types, ret) + caller_ptx(types, ret), arch),
                     build[callee_by](_header(arch) + callee_ptx(types, ret), arch), tmp_path=tmp_path, arch=arch)
    data = _data(len(_slots(types)), 17)
    want = reference(types, data, ret)
    res = run(linked, "k", (1, 1, 1), (1, 1, 1), [data], hazard_check=True)
    assert not res.hazards
    got = int(data[0]) if isinstance(ret, tuple) else int(data[0]) & 0xFFFFFFFF
    assert got == want
    if isinstance(ret, tuple) and ret[1] > 8:
        lo = want & 0xFFFFFFFF
        assert int(data[1]) & 0xFFFFFFFF == sum(lo + k for k in range(2, ret[1] // 4)) & 0xFFFFFFFF
