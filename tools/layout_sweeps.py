"""Structure sweeps against ptxas 13.5.37 (branch cli28), for the figures in docs/STATUS.md:

    python -m tools.layout_sweeps debug sm_90 sm_100 sm_120
        -g cubins of every tests/corpus/cuda module: sections, symbols and relocations equal
        to ptxas's (tests/test_debug_reserved_shared.py's comparison)
    python -m tools.layout_sweeps shared 200 240 sm_89 sm_90 sm_110 sm_120
        -c cubins of generated modules with `.shared` variables (kernels, a `.visible .func`,
        module, own and extern variables): tests/test_relocatable_shared.py's comparison
    python -m tools.layout_sweeps sharedg 300 340 sm_89 sm_90
        the same modules under -c -g: tests/test_relocatable_shared_debug.py's comparison
    python -m tools.layout_sweeps sharedsize 0 100 sm_89,sm_90 [-g] [typed]
        -c (-c -g) cubins of `sized_shared_module`s (b8 arrays of 1..64 bytes aligned 1..16):
        the shared sections' (name, size, alignment) and shared symbols' (name, value, size)
        equal to ptxas's (branch shared29); `typed`: `typed_shared_module`s instead (two `.func`s,
        .b8..b64 elements)
    python -m tools.layout_sweeps fuzz sm_80 39000000 39000200
        the fuzz generator's programs for an arch that ptxas refuses as a whole (no emulator)
    python -m tools.layout_sweeps fuzzhash 39000000 39000200 sm_80,sm_89 > hashes.json
        each seed's program, hashed, per arch (compare two branches' files)
"""
from __future__ import annotations

import collections
import hashlib
import json
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))


def debug(archs: list[str]) -> None:
    import test_debug_reserved_shared as t
    names = sorted(p.stem for p in (ROOT / "tests" / "corpus" / "cuda").glob("*.ptx"))
    for arch in archs:
        same = []
        for n in names:
            src = t._source(n, arch)
            same.append(t._structure(t._ours(src, arch, ("-g",))) == t._structure(t._ptxas(src, arch, ("-g",))))
            if not same[-1]:
                print(arch, "differs:", n)
        print(f"{arch}: {sum(same)}/{len(same)} equal")


def _kernel(k: int, body: str, uses: str, calls_f: bool) -> str:
    """Kernel k of the random `.shared` modules: its own variables, stores through the
    variables it uses, and maybe a call of `f`."""
    call = ("  { .param .b32 a; .param .b32 rr; st.param.b32 [a], %r1; call.uni (rr), f, (a);"
            " ld.param.b32 %r1, [rr]; }\n" if calls_f else "")
    return (f".visible .entry k{k}(.param .u64 p)\n{{\n  .reg .b32 %r<4>; .reg .b64 %rd<2>;\n" + body
            + "  ld.param.u64 %rd1, [p];\n  mov.u32 %r1, %tid.x;\n" + uses + call
            + "  st.global.u32 [%rd1], %r1;\n  ret;\n}\n")


def shared_module(seed: int) -> str:
    """A random module of `.shared` variables for -c (1-3 kernels, maybe a called `.func`)."""
    r = random.Random(seed)
    out = [".version 7.8\n.target sm_89\n.address_size 64\n"]
    mod = []
    for i in range(r.randint(0, 3)):
        out.append(f".shared .align {r.choice((4, 8, 16))} .b32 m{i}[{r.choice((2, 8, 33))}];\n")
        mod.append(f"m{i}")
    if r.random() < 0.4:
        out.append(".extern .shared .align 16 .b32 dyn[];\n")
        mod.append("dyn")
    if r.random() < 0.4:
        out.append(".global .align 4 .u32 gv = 7;\n")
    funcs = []
    if r.random() < 0.5:
        own = [f"fs{j}" for j in range(r.randint(0, 2))]
        body = "".join(f"  .shared .align {r.choice((4, 8))} .b32 {v}[{r.choice((4, 16))}];\n" for v in own)
        names = own + r.sample(mod, min(len(mod), r.randint(0, 2)))
        uses = "".join(f"  mov.u32 %r2, {v}; st.shared.u32 [%r2+{4 * r.randint(0, 1)}], %r1;\n"
                       for v in r.sample(names, len(names)))
        out.append(".visible .func (.param .b32 r) f(.param .b32 a)\n{\n  .reg .b32 %r<4>;\n" + body
                   + "  ld.param.b32 %r1, [a];\n" + uses + "  st.param.b32 [r], %r1;\n  ret;\n}\n")
        funcs.append("f")
    for k in range(r.randint(1, 3)):
        own = [f"k{k}s{j}" for j in range(r.randint(0, 3))]
        body = "".join(f"  .shared .align {r.choice((4, 8, 16))} .b32 {v}[{r.choice((1, 4, 16))}];\n" for v in own)
        names = own[:r.randint(0, len(own))] + r.sample(mod, min(len(mod), r.randint(0, 3)))
        uses = "".join(f"  mov.u32 %r2, {v}; st.shared.u32 [%r2+{4 * r.randint(0, 1)}], %r1;\n"
                       for v in r.sample(names, len(names)))
        out.append(_kernel(k, body, uses, bool(funcs) and r.random() < 0.6))
    return "".join(out)


def shared(first: int, last: int, archs: list[str]) -> None:
    from test_relocatable import _ours_c, _ptxas_c
    from test_relocatable_shared import _compared
    for arch in archs:
        same = 0
        for seed in range(first, last):
            src = shared_module(seed)
            a, b = _compared(_ours_c(src, arch), arch), _compared(_ptxas_c(src, arch), arch)
            same += a == b
            if a != b:
                print(arch, seed, "differs:", [k for k in a if a[k] != b[k]])
        print(f"{arch}: {same}/{last - first} equal")


def sharedg(first: int, last: int, archs: list[str]) -> None:
    """`shared` under -c -g (branch cli29): tests/test_relocatable_shared_debug.py's comparison."""
    from test_relocatable import _for
    from test_relocatable_shared_debug import OPTIONS, _compared, _ours, _ptxas
    def sizeless(st: dict) -> dict:      # (the shared sections' sizes: differ under -c too)
        return dict(st, sections=[s[:4] for s in st["sections"]])

    for arch in archs:
        same = same_but_sizes = 0
        for seed in range(first, last):
            src = _for(shared_module(seed), arch)
            a, b = _compared(_ours(src, arch, OPTIONS)), _compared(_ptxas(src, arch, OPTIONS))
            same += a == b
            same_but_sizes += sizeless(a) == sizeless(b)
            if a != b:
                print(arch, seed, "differs:", [k for k in a if a[k] != b[k]],
                      "(sizes only)" if sizeless(a) == sizeless(b) else "")
        print(f"{arch}: {same}/{last - first} equal; {same_but_sizes}/{last - first} but for shared sections' sizes")


def sized_shared_module(seed: int) -> str:
    """A random module of `.b8` `.shared` arrays of 1..64 bytes aligned 1..16 (branch
    shared29): module variables (maybe an extern one), a `.visible .func` with its own, 1-3
    kernels with their own, some calling the function."""
    r = random.Random(seed)

    def var(n: str) -> str:
        size = r.randint(1, 64) if r.random() < 0.7 else r.randint(1, 20)
        return f".shared .align {r.choice((1, 2, 4, 8, 16))} .b8 {n}[{size}];\n"

    out, mod, funcs = [".version 7.8\n.target sm_89\n.address_size 64\n"], [], []
    for i in range(r.choice((0, 0, 1, 2, 3))):
        out.append(var(f"m{i}"))
        mod.append(f"m{i}")
    if r.random() < 0.3:
        out.append(f".extern .shared .align {r.choice((4, 8, 16))} .b8 dyn[];\n")
        mod.append("dyn")
    if r.random() < 0.5:
        own = [f"fs{j}" for j in range(r.randint(0, 3))]
        names = own + r.sample(mod, min(len(mod), r.randint(0, 2)))
        out.append(".visible .func (.param .b32 r) f(.param .b32 a)\n{\n  .reg .b32 %r<4>;\n"
                   + "".join("  " + var(v) for v in own) + "  ld.param.b32 %r1, [a];\n"
                   + "".join(f"  mov.u32 %r2, {v}; st.shared.u8 [%r2], %r1;\n" for v in names)
                   + "  st.param.b32 [r], %r1;\n  ret;\n}\n")
        funcs.append("f")
    for k in range(r.randint(1, 3)):
        own = [f"k{k}s{j}" for j in range(r.randint(0, 4))]
        body = "".join("  " + var(v) for v in own)
        names = own + r.sample(mod, min(len(mod), r.randint(0, 3)))
        uses = "".join(f"  mov.u32 %r2, {v}; st.shared.u8 [%r2], %r1;\n" for v in r.sample(names, len(names)))
        out.append(_kernel(k, body, uses, bool(funcs) and r.random() < 0.6))
    return "".join(out)


def typed_shared_module(seed: int) -> str:
    """Two `.func`s with their own `.shared` variables, module ones and a kernel's own,
    `.b8/.b16/.b32/.b64` arrays of 1..12 elements aligned at least their element (shared29)."""
    r = random.Random(seed)
    width = {"b8": 1, "b16": 2, "b32": 4, "b64": 8}

    def var(name: str) -> str:
        ty = r.choice(tuple(width))
        return f".shared .align {max(width[ty], r.choice((1, 2, 4, 8, 16)))} .{ty} {name}[{r.randint(1, 12)}];\n"

    def store(names: list) -> str:
        return "".join(f"  mov.u32 %r2, {v}; st.shared.u8 [%r2], %r1;\n" for v in names)

    mods = [f"m{i}" for i in range(r.randint(0, 2))]
    out, calls = [".version 7.8\n.target sm_89\n.address_size 64\n"] + [var(m) for m in mods], ""
    for f in range(2):
        own = [f"f{f}s{j}" for j in range(r.randint(1, 3))]
        out.append(f".visible .func (.param .b32 r) f{f}(.param .b32 a)\n{{\n .reg .b32 %r<4>;\n"
                   + "".join("  " + var(v) for v in own) + " ld.param.b32 %r1, [a];\n" + store(own + mods)
                   + " st.param.b32 [r], %r1;\n ret;\n}\n")
        calls += (f"  {{ .param .b32 a; .param .b32 rr; st.param.b32 [a], %r1; call.uni (rr), f{f}, (a);"
                  " ld.param.b32 %r1, [rr]; }\n")
    own = [f"ks{j}" for j in range(r.randint(0, 3))]
    out.append(".visible .entry k0(.param .u64 p)\n{\n .reg .b32 %r<4>;\n" + "".join("  " + var(v) for v in own)
               + " mov.u32 %r1, %tid.x;\n" + store(own) + calls + " ret;\n}\n")
    return "".join(out)


def shared_sizes(data: bytes) -> dict:
    """The shared sections' (size, alignment) and the symbols in them (value, size); sm_110's
    Mercury copies (`.nv.merc.*`, which we do not write) left out."""
    import io
    from elftools.elf.elffile import ELFFile
    elf = ELFFile(io.BytesIO(data))
    names = [s.name for s in elf.iter_sections()]
    secs = {s.name: (s["sh_size"], s["sh_addralign"]) for s in elf.iter_sections()
            if "shared" in s.name and not s.name.startswith((".rel", ".nv.merc."))}   # (Mercury: not ours)
    syms = sorted((s.name, names[s["st_shndx"]], s["st_value"], s["st_size"])
                  for s in elf.get_section_by_name(".symtab").iter_symbols()
                  if isinstance(s["st_shndx"], int) and names[s["st_shndx"]] in secs
                  and s["st_info"]["type"] != "STT_SECTION")
    return {"sections": secs, "symbols": syms}


def sharedsize(first: int, last: int, archs: list[str], options: tuple = ("-c",), typed: bool = False) -> None:
    from test_debug_reserved_shared import _ours, _ptxas
    from test_relocatable import _for
    for arch in archs:
        same = 0
        for seed in range(first, last):
            src = _for((typed_shared_module if typed else sized_shared_module)(seed), arch)
            a, b = shared_sizes(_ours(src, arch, options)), shared_sizes(_ptxas(src, arch, options))
            same += a == b
            if a != b:
                print(arch, seed, "differs:", {k: (a[k], b[k]) for k in a if a[k] != b[k]})
        print(f"{arch} {' '.join(options)}: {same}/{last - first} equal")

def fuzz(arch: str, first: int, last: int) -> None:
    from ptx2sass import oracle
    from ptx2sass.fuzz.campaign import Options, make_program
    from ptx2sass.fuzz.inputs import case_from_program
    from ptx2sass.fuzz.runner import ptx_for
    bad, msgs = 0, collections.Counter()
    for seed in range(first, last):
        case = case_from_program(make_program(seed, Options(arch=arch)))
        case.arch = arch
        r = oracle.ptxas(ptx_for(case), arch, () if case.fmad else ("--fmad=false",), name="fuzz.ptx")
        if not r.ok:
            bad += 1
            for e in {re.sub(r"line \d+", "line N", ln) for ln in r.stderr.splitlines() if "error" in ln}:
                msgs[e[:150]] += 1
    print(f"{arch} seeds {first}:{last}: refused as a whole {bad}/{last - first}")
    for m, n in msgs.most_common(20):
        print(n, m)


def fuzzhash(first: int, last: int, archs: str) -> None:
    from ptx2sass.fuzz.campaign import Options, make_program
    from ptx2sass.fuzz.inputs import case_from_program
    json.dump({arch: [hashlib.sha256(case_from_program(make_program(s, Options(arch=arch))).text.encode())
                      .hexdigest()[:16] for s in range(first, last)] for arch in archs.split(",")}, sys.stdout)


if __name__ == "__main__":
    what, args = sys.argv[1], sys.argv[2:]
    if what == "debug":
        debug(args)
    elif what == "shared":
        shared(int(args[0]), int(args[1]), args[2:])
    elif what == "sharedsize":
        sharedsize(int(args[0]), int(args[1]), args[2].split(","), ("-c", "-g") if "-g" in args[3:] else ("-c",),
                   "typed" in args[3:])
    elif what == "sharedg":
        sharedg(int(args[0]), int(args[1]), args[2:])
    elif what == "fuzz":
        fuzz(args[0], int(args[1]), int(args[2]))
    elif what == "fuzzhash":
        fuzzhash(int(args[0]), int(args[1]), args[2])
    else:
        raise SystemExit(__doc__)
