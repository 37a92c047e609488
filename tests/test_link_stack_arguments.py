"""The link-time calling convention past R15 (ptx2sass/abi.py, `link_layout`): arguments
R4..R15 first-fit by alignment, the rest in the caller's outgoing area at the bottom of its
frame, read by the callee above its own frame. Checked two ways against the pinned ptxas:
where each argument word of a caller's call goes (registers at the CALL, stack offsets),
traced off nvdisasm's text of both compilers' `-c` objects; and runs in the emulator of
programs nvlink linked from our caller and ptxas's callee, and the other way round, against
a Python reference."""
from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest

from ptx2sass import CompileError, codegen, oracle
from ptx2sass.emu.launch import run

T12 = ["b32"] * 12
# name -> parameter types (the result: `.b32` unless given by the name's `ret` entry)
SIGNATURES = {
    "hole": ["b32", "b64", "b32"],                               # R4, R6:R7, R5 (back-filled)
    "odd_r15": ["b32"] * 11 + ["b64", "b32", "b32"],             # b64 on the stack, b32 in R15
    "stack_order": T12 + ["b32", "b64", "b32"],                  # [R1], [R1+8], [R1+0x10]
    "narrow": T12 + ["b16", "b8", "b32", "f32"],                 # 4-byte slots for 8/16-bit
    "floats": ["f32", "f64"] * 5 + ["f64", "f32", "b64"],
    "many": [("b64" if k % 3 == 1 else "b32") for k in range(33)],
    # tools/link_layout_sweep seed 102: our callee's epilogue reloads R16/R17, which ptxas's
    # caller reads at once after the RET (the RET must wait on their scoreboards)
    "sweep102": ["f32", "b64", "f32", "f32", "b32", "b32", "b64", "f32", "f64", "f32"],
}
RESULT = {"many": "b64", "floats": "b64"}


def _reg(ty: str) -> str:
    return {"b8": "b16"}.get(ty, ty)      # (no 8-bit registers in PTX)


def callee_ptx(types: list[str], ret: str = "b32", name: str = "f", visible: str = ".visible") -> str:
    """f(a0, a1, ...): s = s * 3 + a_k over the arguments (as u64, 32-bit ones zero-extended,
    floats by their bits), returned as `ret`."""
    body = ["  .reg .u64 %s, %t;", "  mov.u64 %s, 0;"]
    for k, ty in enumerate(types):
        bits = int(ty[1:])
        body.append(f"  {{ .reg .{_reg(ty)} %v; ld.param.{ty} %v, [a{k}];")
        if bits == 64:
            body.append("    mov.b64 %t, %v;")
        elif bits == 32:
            body.append("    { .reg .b32 %q; mov.b32 %q, %v; cvt.u64.u32 %t, %q; }")
        else:
            body.append("    cvt.u64.u16 %t, %v;" + (" and.b64 %t, %t, 255;" if bits == 8 else ""))
        body.append("    mad.lo.u64 %s, %s, 3, %t; }")
    if ret == "b64":
        body.append("  st.param.b64 [r], %s;")
    else:
        body.append("  { .reg .b32 %q; cvt.u32.u64 %q, %s; st.param.b32 [r], %q; }")
    sig = ", ".join(f".param .{ty} a{k}" for k, ty in enumerate(types))
    return f"{visible} .func (.param .{ret} r) {name}({sig})\n{{\n" + "\n".join(body) + "\n  ret;\n}\n"


def caller_ptx(types: list[str], ret: str = "b32", name: str = "f", entry: str = "k") -> str:
    """Kernel `entry`(p): argument k loaded from p + 8k, f's result stored to p[0]."""
    body = [f".visible .entry {entry}(.param .u64 p)", "{", "  .reg .u64 %p; ld.param.u64 %p, [p];",
            f"  .reg .{ret} %res;", "  {"]
    for k, ty in enumerate(types):
        body.append(f"  .param .{ty} a{k}; {{ .reg .{_reg(ty)} %v; ld.global.{ty} %v, [%p+{8 * k}]; "
                    f"st.param.{ty} [a{k}], %v; }}")
    args = ", ".join(f"a{k}" for k in range(len(types)))
    body += [f"  .param .{ret} r; call.uni (r), {name}, ({args}); ld.param.{ret} %res, [r];", "  }",
             f"  st.global.{ret} [%p], %res;", "  ret;", "}"]
    return "\n".join(body) + "\n"


def declaration(types: list[str], ret: str = "b32", name: str = "f") -> str:
    sig = ", ".join(f".param .{ty} a{k}" for k, ty in enumerate(types))
    return f".extern .func (.param .{ret} r) {name}({sig});\n"


def _header(arch: str) -> str:
    version = "9.0" if int(arch[3:]) >= 100 else "7.8"
    return f".version {version}\n.target {arch}\n.address_size 64\n"


def reference(types: list[str], data: np.ndarray, ret: str) -> int:
    s = 0
    for k, ty in enumerate(types):
        word = int(data[k])
        v = word if ty in ("b64", "f64") else word & ((1 << int(ty[1:])) - 1)
        s = (s * 3 + v) & (2 ** 64 - 1)
    return s if ret == "b64" else s & 0xFFFFFFFF


def _ptxas_c(ptx: str, arch: str) -> bytes:
    r = oracle.ptxas(ptx, arch=arch, options=("-c",))
    if r.returncode != 0 and "not found" in r.stderr:
        pytest.skip("ptxas not installed")
    assert r.ok, r.stderr
    return r.output


def _ours_c(ptx: str, arch: str) -> bytes:
    return codegen.compile_ptx(ptx, arch=arch, compile_only=True)


def _nvlink(*cubins: bytes, tmp_path, arch: str) -> bytes:
    nvlink = oracle.tool_path("ptxas").parent / "nvlink"
    if not nvlink.is_file():
        pytest.skip("nvlink not installed")
    paths = []
    for i, data in enumerate(cubins):
        paths.append(tmp_path / f"m{i}.cubin")
        paths[-1].write_bytes(data)
    out = tmp_path / "linked.cubin"
    r = subprocess.run([str(nvlink), f"-arch={arch}", *map(str, paths), "-o", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return out.read_bytes()


# ---------------------------------------------------------------- layout, traced
_INS = re.compile(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z0-9_.]+)\s*([^;]*);")
_REG = re.compile(r"^R(\d+)$")


def call_layout(cubin: bytes, kernel: str = "k") -> tuple[dict, int]:
    """Where the caller's argument words are at its CALL: {load offset (+4: a 64-bit value's
    high word): ("R", n) or ("stack", byte offset from R1 at the CALL)}, and the bytes R1
    moved down by. Traced over the kernel's straight-line code: LDG from the parameter
    pointer names the word, register moves copy it, STL puts it on the stack."""
    text = oracle.nvdisasm(cubin, ())
    section = text.split(f".text.{kernel}:", 1)[1]
    regs: dict[int, object] = {}
    stack: dict[int, object] = {}
    sp = 0
    for m in _INS.finditer(section):
        op, args = m[1], [a.strip() for a in m[2].split(",")]
        base = op.split(".")[0]
        if base == "CALL":
            break
        if base in ("IADD3", "IADD", "VIADD") and args[0] == "R1":
            v = int(next(a for a in args[1:] if a.startswith(("-0x", "0x"))), 16)
            sp += v - (1 << 32 if v >= 1 << 31 else 0)
            continue
        if base == "LDG":
            addr = re.search(r"\[R\d+(?:\.64)?(?:\+(0x[0-9a-f]+))?\]", m[2])
            off = int(addr[1], 16) if addr[1] else 0
            d = int(_REG.match(args[0])[1])
            for k in range(4 if ".128" in op else 2 if ".64" in op else 1):
                regs[d + k] = off + 4 * k
            continue
        if base == "STL":
            addr = re.search(r"\[R1(?:\+(0x[0-9a-f]+))?\]", m[2])
            off = int(addr[1], 16) if addr[1] else 0
            s = int(_REG.match(args[-1])[1])
            for k in range(4 if ".128" in op else 2 if ".64" in op else 1):    # (ptxas: STL.128 of a struct)
                stack[off + 4 * k] = regs.get(s + k)
            continue
        if (base == "MOV" and len(args) == 2) or (op == "IMAD.MOV.U32" and args[1:3] == ["RZ", "RZ"]):
            src = _REG.match(args[-1].replace(".reuse", ""))
            d = _REG.match(args[0])
            if d:
                regs[int(d[1])] = regs.get(int(src[1])) if src else None
            continue
        d = _REG.match(args[0]) if args and args[0] else None
        if d:       # anything else writing a register: no longer an argument word
            regs[int(d[1])] = None
    where = {}
    for r, word in regs.items():
        if word is not None and 4 <= r <= 15:
            where[word] = ("R", r)
    for off, word in stack.items():
        if word is not None:
            where[word] = ("stack", off)
    return where, -sp


def _expected_words(types: list[str]) -> set[int]:
    out = set()
    for k, ty in enumerate(types):
        out.add(8 * k)
        if ty.endswith("64"):
            out.add(8 * k + 4)
    return out


@pytest.mark.parametrize("name, arch", [(n, a) for n in SIGNATURES if n != "sweep102" for a in ("sm_86", "sm_100")]
                         + [(n, "sm_90") for n in ("hole", "stack_order", "many")]
                         + [(n, a) for n in ("hole", "stack_order") for a in ("sm_80", "sm_120")])
def test_call_layout_is_ptxas(name, arch):
    """Every argument word of the call sits where ptxas's caller puts it (register or
    outgoing-area offset), and the frame ptxas opens for it is ours too."""
    types, ret = SIGNATURES[name], RESULT.get(name, "b32")
    ptx = _header(arch) + declaration(types, ret) + caller_ptx(types, ret)
    theirs, their_frame = call_layout(_ptxas_c(ptx, arch))
    ours, our_frame = call_layout(_ours_c(ptx, arch))
    assert set(theirs) == _expected_words(types)       # the tracer saw every word
    assert ours == theirs
    assert our_frame == their_frame


def test_layout_rule_as_measured():
    """abi.link_layout on the facts measured with ptxas 13.5.37 (docs/STATUS.md, abi28)."""
    from ptx2sass.abi import Place, link_layout
    assert link_layout(["b32", "b64", "b32"], "argument", "f") == (
        [Place(4, 1), Place(6, 2), Place(5, 1)], 0)
    places, area = link_layout(["b32"] * 11 + ["b64", "b32", "b32"], "argument", "f")
    assert places[11:] == [Place(None, 2, 0), Place(15, 1), Place(None, 1, 8)] and area == 0x10
    places, area = link_layout(T12 + ["b32", "b64", "b32"], "argument", "f")
    assert places[12:] == [Place(None, 1, 0), Place(None, 2, 8), Place(None, 1, 0x10)] and area == 0x18


# ---------------------------------------------------------------- linked and run


def _data(types: list[str], seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 1 << 64, max(len(types), 2), dtype=np.uint64)


@pytest.mark.parametrize("caller_by, callee_by", [("ours", "ptxas"), ("ptxas", "ours")])
@pytest.mark.parametrize("name, arch", [("odd_r15", "sm_89"), ("odd_r15", "sm_100"), ("stack_order", "sm_89"),
                                        ("narrow", "sm_100"), ("many", "sm_89"), ("sweep102", "sm_89")])
def test_stack_arguments_link_and_run(name, caller_by, callee_by, arch, tmp_path):
    """Our caller with ptxas's callee, and ptxas's caller with ours, linked by nvlink."""
    types, ret = SIGNATURES[name], RESULT.get(name, "b32")
    caller = _header(arch) + declaration(types, ret) + caller_ptx(types, ret)
    callee = _header(arch) + callee_ptx(types, ret)
    build = {"ours": _ours_c, "ptxas": _ptxas_c}
    linked = _nvlink(build[caller_by](caller, arch), build[callee_by](callee, arch), tmp_path=tmp_path, arch=arch)
    data = _data(types, hash(name) & 0xFFFF)
    want = reference(types, data, ret)
    res = run(linked, "k", (1, 1, 1), (1, 1, 1), [data], hazard_check=True)
    assert not res.hazards
    got = int(data[0]) if ret == "b64" else int(data[0]) & 0xFFFFFFFF
    assert got == want


def test_register_hole_links_and_runs(tmp_path):
    """(b32, b64, b32): ptxas's callee reads the last in R5, the hole the pair left."""
    types = SIGNATURES["hole"]
    arch = "sm_89"
    linked = _nvlink(_ours_c(_header(arch) + declaration(types) + caller_ptx(types), arch),
                     _ptxas_c(_header(arch) + callee_ptx(types), arch), tmp_path=tmp_path, arch=arch)
    data = _data(types, 7)
    want = reference(types, data, "b32")
    res = run(linked, "k", (1, 1, 1), (1, 1, 1), [data], hazard_check=True)
    assert not res.hazards
    assert int(data[0]) & 0xFFFFFFFF == want


# A link target that takes stack arguments and passes others on: kernel -> g (ours, its
# incoming area above its frame, its own outgoing area at the bottom) -> f (ptxas's).
G_TYPES = T12 + ["b64", "b32"]


def _g_ptx() -> str:
    """g(a0..a13): f(a13, a0, ..., a12) + 1 (f takes the b64 on the stack and more)."""
    f_types = ["b32"] + T12 + ["b64"]
    sig = ", ".join(f".param .{ty} a{k}" for k, ty in enumerate(G_TYPES))
    body = [f".visible .func (.param .b32 r) g({sig})", "{", "  .reg .b32 %res;", "  {"]
    order = [13] + list(range(12)) + [12]
    for j, k in enumerate(order):
        ty = G_TYPES[k]
        body.append(f"  .param .{ty} c{j}; {{ .reg .{ty} %v; ld.param.{ty} %v, [a{k}]; st.param.{ty} [c{j}], %v; }}")
    args = ", ".join(f"c{j}" for j in range(len(order)))
    body += [f"  .param .b32 q; call.uni (q), f, ({args}); ld.param.b32 %res, [q];", "  }",
             "  add.u32 %res, %res, 1;", "  st.param.b32 [r], %res;", "  ret;", "}"]
    return declaration(f_types) + "\n".join(body) + "\n", f_types, order


@pytest.mark.parametrize("arch, g_by", [("sm_89", "ours"), ("sm_89", "ptxas"), ("sm_90", "ours")])
def test_link_target_receives_and_passes_stack_arguments(g_by, arch, tmp_path):
    g_ptx, f_types, order = _g_ptx()
    kernel = _header(arch) + declaration(G_TYPES, "b32", "g") + caller_ptx(G_TYPES, "b32", "g")
    build = {"ours": _ours_c, "ptxas": _ptxas_c}
    linked = _nvlink(_ours_c(kernel, arch), build[g_by](_header(arch) + g_ptx, arch),
                     _ptxas_c(_header(arch) + callee_ptx(f_types), arch), tmp_path=tmp_path, arch=arch)
    data = _data(G_TYPES, 11)
    f_args = np.array([data[k] for k in order], dtype=np.uint64)
    want = (reference(f_types, f_args, "b32") + 1) & 0xFFFFFFFF
    res = run(linked, "k", (1, 1, 1), (1, 1, 1), [data], hazard_check=True)
    assert not res.hazards
    assert int(data[0]) & 0xFFFFFFFF == want


@pytest.mark.parametrize("arch", ["sm_89", "sm_100"])
def test_own_link_target_with_stack_arguments_in_one_module(arch, tmp_path):
    """-c: a `.visible .func` called in its own module goes through the link convention on
    both sides (ours), stack arguments included."""
    types = SIGNATURES["many"]
    ptx = _header(arch) + callee_ptx(types, "b64") + caller_ptx(types, "b64")
    linked = _nvlink(_ours_c(ptx, arch), tmp_path=tmp_path, arch=arch)
    data = _data(types, 3)
    want = reference(types, data, "b64")
    res = run(linked, "k", (1, 1, 1), (1, 1, 1), [data], hazard_check=True)
    assert not res.hazards
    assert int(data[0]) == want


def test_system_call_past_r15_is_refused():
    """A whole-program system call whose arguments would go on the stack: refused clearly."""
    ptx = _header("sm_89") + ".extern .func (.param .b32 r) vprintf(" + ", ".join(
        f".param .b64 a{k}" for k in range(7)) + ");\n" + ".visible .entry k(.param .u64 p)\n{\n .reg .b32 %r;\n {\n" + "".join(
        f" .param .b64 a{k}; st.param.b64 [a{k}], 0;\n" for k in range(7)) + \
        " .param .b32 r; call.uni (r), vprintf, (a0, a1, a2, a3, a4, a5, a6); ld.param.b32 %r, [r];\n }\n ret;\n}\n"
    with pytest.raises(CompileError):
        codegen.compile_ptx(ptx, arch="sm_89")
