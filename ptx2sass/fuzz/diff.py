"""`ptx2sass diff FILE.ptx`: compile one file with ptxas and with ptx2sass, run both cubins in
the emulator on the same inputs, and show the first output that differs, the two SASS
listings side by side, and registers / instructions / cycles of each.

A file with a `// fuzz-case:` header (the fuzzer's regression tests, `ptx2sass-fuzz show`)
runs exactly as the fuzzer ran it, its texture/surface objects bound as bindless handles
1, 2, … (`fuzz.inputs.launch_data`). Any other file: every kernel (or `--kernel`) gets each
64-bit parameter as a buffer of `--buffer-bytes` bytes of deterministic data (small
integers and floats, the same for both cubins) and other scalars small values, and each
module `.texref`/`.surfref` a deterministic object bound by name (a launch file's
`"bind"`); surfaces are compared after the run like buffers. Launched as `--grid` x
`--block` (default: its `.reqntid`, else 2 x 64). A bindless handle passed as a plain
`.u64` parameter of such a file is not recognised (it gets a buffer).
"""
from __future__ import annotations

import argparse
import difflib
import re
import struct
import sys

import numpy as np

USAGE = "ptx2sass diff FILE.ptx [--kernel NAME] [--grid X,Y,Z] [--block X,Y,Z] [--arch sm_89] ..."
_LISTING = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;?\s*(?:/\*\s*0x[0-9a-f]+\s*\*/)?\s*$")


def _dims(text: str) -> tuple[int, int, int]:
    parts = [int(x) for x in text.replace("x", ",").split(",") if x]
    return tuple((parts + [1, 1, 1])[:3])


def listing(cubin: bytes, kernel: str) -> list[str]:
    """The kernel's instructions as nvdisasm prints them (our own printer if it cannot)."""
    try:
        from ptx2sass import oracle
        text = oracle.nvdisasm(cubin, ())
        out, inside = [], False
        for line in text.splitlines():
            words = line.split()
            if words[:1] == [".section"]:
                inside = words[1].split(",")[0] == f".text.{kernel}"
                continue
            if inside:
                m = _LISTING.search(line)
                if m:
                    out.append(m.group(2).strip())
        if out:
            return _trim(out)
    except Exception:  # noqa: BLE001 - nvdisasm missing or refusing our words
        pass
    from ptx2sass.emu.errors import EmuFault
    from ptx2sass.emu.loader import load_program
    from ptx2sass.encoder.sass_text import format_instruction
    try:
        prog = load_program(cubin, kernel)
    except EmuFault as e:
        return [f"(no listing: {e})"]
    return _trim([format_instruction(ins) for _, ins in prog.instructions])


def _trim(lines: list[str]) -> list[str]:
    """Without the padding after the last EXIT (the self-branch and NOPs)."""
    while lines and (lines[-1].startswith("NOP") or re.match(r"BRA\b.*\(\.L_x_\d+\)|BRA 0x", lines[-1])):
        lines.pop()
    return lines


def side_by_side(left: list[str], right: list[str], width: int = 60) -> list[str]:
    """Two listings aligned by their opcodes (difflib), changed rows marked."""
    def key(s):
        return re.sub(r"^@!?U?P\w+\s+", "", s).split(" ")[0]
    sm = difflib.SequenceMatcher(a=[key(x) for x in left], b=[key(x) for x in right], autojunk=False)
    rows = [f"{'ptx2sass':<{width}} | ptxas", f"{'-' * width}-+-{'-' * width}"]
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        a, b = left[i1:i2], right[j1:j2]
        for k in range(max(len(a), len(b))):
            x = a[k] if k < len(a) else ""
            y = b[k] if k < len(b) else ""
            mark = " " if tag == "equal" and x == y else "*"
            rows.append(f"{x[:width]:<{width}}{mark}| {y[:width]}")
    return rows


# ------------------------------------------------------------------------------ generic inputs

def kernel_signatures(text: str) -> list[dict]:
    """Entry kernels with their parameters and launch hints, read by our frontend."""
    from ptx2sass import frontend
    module = frontend.parse(text, "input.ptx")
    out = []
    for item in module.items:
        if getattr(item, "kind", None) != ".entry" or getattr(item, "body", None) is None:
            continue
        params = []
        for decl in item.params:
            for d in decl.declarators:
                count = 1
                for dim in d.dims or ():
                    count *= dim or 1
                params.append({"name": d.name, "type": (decl.type or ".b8").lstrip("."),
                               "bytes": count * _type_bytes(decl.type), "array": bool(d.dims)})
        hints = {}
        for dr in item.directives:
            name = getattr(dr, "name", "")
            if name in (".reqntid", ".maxntid"):
                hints[name] = tuple(int(a) for a in dr.args)
        out.append({"name": item.name, "params": params, "hints": hints})
    return out


def _type_bytes(t: str | None) -> int:
    digits = re.sub(r"\D", "", t or "8")
    return max(1, int(digits or 8) // 8)


def generic_inputs(sig: dict, buffer_bytes: int, seed: int):
    """(params, buffers) for the emulator: 64-bit params as buffers, scalars small values."""
    from ptx2sass.emu.launch import Param
    from ptx2sass.fuzz.inputs import _rng, values
    params, buffers = [], {}
    for i, p in enumerate(sig["params"]):
        t, size = p["type"], p["bytes"]
        if not p["array"] and size == 8 and t in ("u64", "s64", "b64"):
            rng = _rng(seed, 300 + i)
            words = buffer_bytes // 4
            ints = rng.integers(0, 64, words).astype(np.uint32)
            floats = (rng.integers(-64, 64, words).astype(np.float32) / 8).view(np.uint32)
            data = np.where(rng.random(words) < 0.5, ints, floats).astype(np.uint32).tobytes()
            name = f"param{i}_{p['name']}"
            buffers[name] = (buffer_bytes, data)
            params.append(Param(buffer=name))
        elif t in ("f32",):
            params.append(Param(type="u32", value=struct.unpack("<I", struct.pack("<f", 1.5))[0]))
        elif t in ("f64",):
            params.append(Param(type="u64", value=struct.unpack("<Q", struct.pack("<d", 1.5))[0]))
        elif size <= 8 and not p["array"]:
            fmt = {1: "u8", 2: "u16", 4: "u32", 8: "u64"}[size]
            params.append(Param(type=fmt, value=64 if size >= 2 else 7))
        else:
            params.append(Param(type="u64", value=0))     # a struct or array: zeros
    return params, buffers


# ------------------------------------------------------------------------------ the command

_MODULE_OBJECT = re.compile(r"^\s*\.global\s+\.(texref|surfref)\s+(\w+)\s*;", re.M)


def module_objects(text: str, seed: int) -> dict:
    """NAME -> a deterministic Texture/Surface for each module `.texref`/`.surfref` (bound by
    name, as a launch file's `"bind"` does): a 16 x 16 f32 texture of small values in 1/8
    steps, a 16 x 16 u32 surface of small integers. A fresh object per call: kernels write
    surfaces in place, so each cubin's run gets its own."""
    from ptx2sass.emu.textures import Surface, Texture
    from ptx2sass.fuzz.inputs import _rng
    out = {}
    for i, (kind, name) in enumerate(_MODULE_OBJECT.findall(text)):
        rng = _rng(seed, 500 + i)
        if kind == "texref":
            out[name] = Texture((rng.integers(-64, 64, (16, 16)) / 8).astype(np.float32), "2d")
        else:
            out[name] = Surface(rng.integers(0, 64, (16, 16)).astype(np.uint32), "2d")
    return out


def _run(cubin, kernel, grid, block, params, buffers, dynamic_shared, budget, objects=(), textures=None):
    """Run one cubin; a word our decoder cannot read is said, and the cubin decoded from
    nvdisasm's listing instead (so a gap of the emulator does not hide the comparison).
    `objects`: the bindless texture/surface objects (handles 1, 2, … as the fuzz-case's
    parameters name them); `textures`: module `.texref`/`.surfref` bindings by name."""
    from ptx2sass.emu.errors import EmuFault
    from ptx2sass.emu.launch import run_buffers
    from ptx2sass.emu.loader import load_program
    try:
        prog = load_program(cubin, kernel)
    except EmuFault as e:
        if "cannot decode" not in e.reason:
            raise
        print(f"note: the emulator's decoder cannot read a word ({e.reason[:90]}...); "
              "decoding from nvdisasm's listing instead")
        from ptx2sass.fuzz.runner import load_from_listing
        prog = load_from_listing(cubin, kernel)
    res = run_buffers(prog, grid, block, params, buffers, dynamic_shared_bytes=dynamic_shared,
                      hazard_check=True, budget=budget, objects=objects, textures=textures)
    return prog, res


def _first_difference(ours: dict, theirs: dict) -> str | None:
    for name in theirs:
        a = np.frombuffer(ours[name], dtype=np.uint8)
        b = np.frombuffer(theirs[name], dtype=np.uint8)
        bad = np.nonzero(a != b)[0]
        if len(bad):
            at = int(bad[0]) // 4 * 4
            x = int.from_bytes(ours[name][at:at + 4], "little")
            y = int.from_bytes(theirs[name][at:at + 4], "little")
            fx = struct.unpack("<f", struct.pack("<I", x))[0]
            fy = struct.unpack("<f", struct.pack("<I", y))[0]
            return (f"buffer {name}, byte {at} (word {at // 4}; {len(bad)} bytes differ): "
                    f"ptx2sass {x:#010x} ({fx:g} as f32), ptxas {y:#010x} ({fy:g} as f32)")
    return None


def diff_file(path: str, args) -> int:
    from ptx2sass import oracle
    from ptx2sass.emu.textures import Surface
    from ptx2sass.errors import CompileError
    from ptx2sass.fuzz.inputs import launch_data, read_case
    from ptx2sass.fuzz.runner import compare
    text = open(path, encoding="latin-1").read()
    case = read_case(text)
    arch = args.arch
    if case is not None:      # a fuzz case's sm_89 PTX, lowered to an older arch as the runner does
        import dataclasses
        from ptx2sass.fuzz.runner import ptx_for
        text = ptx_for(dataclasses.replace(case, text=text, arch=arch))
    opts = () if (case is None or case.fmad) else ("--fmad=false",)
    theirs_run = oracle.ptxas(text, arch, opts, name=path.split("/")[-1])
    if not theirs_run.ok:
        print(f"ptxas rejects {path}:\n{theirs_run.stderr.strip()}")
        return 2
    import ptx2sass
    try:
        ours_cubin = ptx2sass.compile(text, arch, filename=path, **({} if case is None or case.fmad
                                                                     else {"fmad": False}))
    except CompileError as e:
        print(f"ptx2sass refuses {path}: {e}")
        return 2
    kernels = [{"name": case.kernel}] if case else kernel_signatures(text)
    if args.kernel:
        kernels = [k for k in kernels if k["name"] == args.kernel]
        if not kernels:
            print(f"no kernel {args.kernel} in {path}")
            return 2
    status = 0
    for k in kernels:
        name = k["name"]
        print(f"=== kernel {name}")
        if case is not None:
            data = launch_data(case)
            grid, block, params, buffers = case.grid, case.block, data.params, data.buffers
            n_objects = len(data.objects)
        else:
            hint = k["hints"].get(".reqntid")
            block = _dims(args.block) if args.block else (tuple((list(hint) + [1, 1])[:3]) if hint else (64, 1, 1))
            grid = _dims(args.grid) if args.grid else (2, 1, 1)
            params, buffers = generic_inputs(k, args.buffer_bytes, args.seed)
            n_objects = len(_MODULE_OBJECT.findall(text))
            if args.dynamic_shared is None:
                # a module with `.extern .shared` arrays sizes them at launch
                args.dynamic_shared = 48 * 1024 if re.search(r"\.extern\s+\.shared", text) else 0
        print(f"launch: grid {grid}, block {block}; "
              + ("inputs from the fuzz-case header" if case else
                 f"{len(buffers)} buffers of {args.buffer_bytes} bytes, {len(params) - len(buffers)} scalars")
              + (f"; {n_objects} texture/surface objects bound" if n_objects else ""))
        results, bound = {}, {}
        for who, cubin in (("ptx2sass", ours_cubin), ("ptxas", theirs_run.output)):
            # objects are made afresh for each run (surfaces are written in place)
            objects = launch_data(case).objects if case is not None else []
            bound[who] = {} if case is not None else module_objects(text, args.seed)
            try:
                results[who] = _run(cubin, name, grid, block, params, buffers, args.dynamic_shared or 0,
                                    args.budget, objects, bound[who])
            except Exception as e:  # noqa: BLE001 - a fault is a finding to show
                results[who] = (None, None)
                print(f"{who}'s cubin faults in the emulator: {e}")
                status = 1
        (op, ores), (tp, tres) = results["ptx2sass"], results["ptxas"]
        if ores is not None and tres is not None:
            if case is not None:
                d = compare(case, ores.buffers, tres.buffers)
                first = d[1] if d else None
            else:
                first = _first_difference(ores.buffers, tres.buffers) or _first_difference(
                    *({n: o.data.tobytes() for n, o in bound[w].items() if isinstance(o, Surface)}
                      for w in ("ptx2sass", "ptxas")))
            if first:
                print(f"first difference: {first}")
                status = 1
            else:
                print("outputs: identical" + (" (NaN = NaN, approximate ones within bound)" if case else ""))
        ol = listing(ours_cubin, name)
        tl = listing(theirs_run.output, name)
        print(f"{'':<16}{'ptx2sass':>10}{'ptxas':>10}")
        table = (("registers", lambda p, r, l: p.regcount), ("instructions", lambda p, r, l: len(l)),
                 ("executed (warp)", lambda p, r, l: r.instructions), ("cycles", lambda p, r, l: r.cycles),
                 ("hazards", lambda p, r, l: len(r.hazards)))
        for label, fn in table:
            vals = [str(fn(p, r, lst)) if p is not None and r is not None else "-"
                    for p, r, lst in ((op, ores, ol), (tp, tres, tl))]
            print(f"{label:<16}{vals[0]:>10}{vals[1]:>10}")
        for who, (p, r) in (("ptx2sass", (op, ores)), ("ptxas", (tp, tres))):
            if r is not None and r.hazards:
                print(f"{who}: {len(r.hazards)} hazard(s), first: {r.hazards[0]}")
                if who == "ptx2sass":
                    status = 1
        if not args.no_listing:
            print()
            print("\n".join(side_by_side(ol, tl, args.width)))
        print()
    return status


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="ptx2sass diff", description=__doc__.split("\n\n")[0], usage=USAGE)
    ap.add_argument("file")
    ap.add_argument("--kernel", help="only this kernel")
    ap.add_argument("--arch", default="sm_89")
    ap.add_argument("--grid", help="X,Y,Z (default 2)")
    ap.add_argument("--block", help="X,Y,Z (default: .reqntid, else 64)")
    ap.add_argument("--buffer-bytes", type=int, default=65536, help="size of each pointer parameter's buffer")
    ap.add_argument("--dynamic-shared", type=int, default=None,
                    help="dynamic shared memory bytes (default: 48 KiB if the file has .extern .shared, else 0)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the generated buffer contents")
    ap.add_argument("--budget", type=int, default=1_000_000, help="warp-instructions each run may execute")
    ap.add_argument("--width", type=int, default=60, help="column width of the listings")
    ap.add_argument("--no-listing", action="store_true")
    args = ap.parse_args(argv)
    import warnings
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    try:
        return diff_file(args.file, args)
    except OSError as e:
        print(f"ptx2sass diff: {e}", file=sys.stderr)
        return 2
