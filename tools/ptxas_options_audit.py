"""Audit of ptxas's command line: every option `ptxas --help` lists, in each of its spellings
and value forms, run through ptxas and through `ptx2sass` on one small valid module, a real
target (sm_89 unless the row names another).

The option list comes from the pinned ptxas's own `--help` (parsed here, not from our option
table), so an option we lack shows up as a row. Per row:
- `rc`, `stderr` (ptxas's name at a line's start read as ours; -v's compile times and
  register counts left out), `stdout` (present or not),
  `output` (a file written or not): as ptxas's;
- `loads`: our cubin, where we wrote one, is read by nvdisasm;
- `effect`: what the option changes against the same command without it, per tool: the
  ELF type/flags, the section names, the SASS (nvdisasm, addresses dropped) and the global
  memory instructions' spellings. Where ptxas's memory spellings change, ours must equal
  them; elsewhere the change's kinds must agree (ptxas-internal tuning that only moves its
  own code around is listed, not failed: `code (theirs only)`);
- `tkinfo`: the arguments `.note.nv.tkinfo` records (ptxas's normalised command line).

    python -m tools.ptxas_options_audit [--arch sm_89] [--input FILE.ptx] [--only SUBSTRING]
                                        [--json OUT] [--verbose]

prints the table (one line per row) and the counts. ptxas and nvdisasm runs go through the
oracle's cache; ours run in-process.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ptx2sass import oracle

ARCH = "sm_89"
INPUT = "probe.ptx"
OUTPUT = "out.cubin"

# One kernel with global loads and stores (cache operators), a multiply and an add (fmad),
# a branch and a call to a module-local function (-c, -func-maxrregcount, -ewp).
PROBE = """\
.version 8.0
.target sm_89
.address_size 64

.func (.param .b32 r) twice(.param .b32 a)
{
\t.reg .b32 %r<3>;
\tld.param.b32 %r1, [a];
\tadd.s32 %r2, %r1, %r1;
\tst.param.b32 [r], %r2;
\tret;
}

.visible .entry k(.param .u64 p, .param .u64 q)
{
\t.reg .b64 %rd<6>;
\t.reg .b32 %r<6>;
\t.reg .f32 %f<5>;
\t.reg .pred %p1;
\tld.param.u64 %rd1, [p];
\tld.param.u64 %rd2, [q];
\tmov.u32 %r1, %tid.x;
\tmul.wide.u32 %rd3, %r1, 4;
\tadd.s64 %rd4, %rd1, %rd3;
\tld.global.f32 %f1, [%rd4];
\tld.global.f32 %f2, [%rd4+4];
\tmul.f32 %f3, %f1, %f2;
\tadd.f32 %f4, %f3, %f1;
\tsetp.gt.f32 %p1, %f4, 0f00000000;
\t@%p1 bra DONE;
\t{
\t.param .b32 a0;
\t.param .b32 r0;
\tmov.b32 %r2, %f4;
\tst.param.b32 [a0], %r2;
\tcall.uni (r0), twice, (a0);
\tld.param.b32 %r3, [r0];
\tmov.b32 %f4, %r3;
\t}
DONE:
\tadd.s64 %rd5, %rd2, %rd3;
\tst.global.f32 [%rd5], %f4;
\tret;
}
"""
# Only functions: what --compile-as-tools-patch compiles.
FUNCTIONS_ONLY = PROBE[:PROBE.index(".visible .entry")]
OPTIONS_FILE = "opts.txt"
FILES = {INPUT: PROBE, "funcs.ptx": FUNCTIONS_ONLY, OPTIONS_FILE: "-O2 -lineinfo\n"}


@dataclass
class HelpOption:
    long: str
    alias: str
    placeholder: str            # "" for a flag
    allowed: tuple[str, ...]


def ptxas_help() -> str:
    return subprocess.run([str(oracle.tool_path("ptxas")), "--help"], capture_output=True,
                          text=True, check=True).stdout


def help_options(text: str) -> list[HelpOption]:
    """The options of ptxas's --help: `--long <placeholder>  (-alias)` head lines and the
    'Allowed values' of their blocks."""
    found = []
    for block in re.split(r"\n(?=--)", text):
        head = re.match(r"--(\S+)(?: (<[^>]*>(?:,\.\.\.)?))?\s+\(-(\S+)\)", block)
        if not head:
            continue
        flat = " ".join(block.split())
        allowed = re.search(r"Allowed values for this option: (.*?)\.(?: Default|$)", flat)
        values = tuple(v.strip().strip("'") for v in allowed.group(1).split(",")) if allowed else ()
        found.append(HelpOption(head.group(1), head.group(3), head.group(2) or "", values))
    return found


# Values tried per placeholder (beyond 'Allowed values'), chosen to cover the kinds each
# takes: ordinary, boundary and refused ones.
VALUES = {
    "Ofast-compile": ("0", "min", "mid", "max"),
    "allow-expensive-optimizations": ("true", "false"),
    "apply-controls": (),
    "def-load-cache": ("ca", "cg", "cs", "lu", "cv"),
    "force-load-cache": ("ca", "cg", "cs", "lu", "cv"),
    "def-store-cache": ("wb", "cg", "cs", "wt"),
    "force-store-cache": ("wb", "cg", "cs", "wt"),
    "device-function-maxrregcount": ("archmax", "archmin", "32"),
    "entry": ("k",),
    "input-as-string": (),
    "maxntid": ("64", "32,4", "16,4,2"),
    "maxrregcount": ("archmax", "archmin", "16", "32", "64", "255", "300"),
    "minnctapersm": ("1", "4"),
    "opt-level": ("0", "1", "2", "3", "4"),
    "options-file": (OPTIONS_FILE,),
    "output-file": ("other.cubin",),
    "register-usage-level": ("0", "5", "10"),
    "split-compile": ("0", "1", "4"),
}
# Extra command-line context for some rows: the option's effect needs -c, or a file.
CONTEXT = {"device-function-maxrregcount": ("-c",), "enable-func-clone-sc": ("-c",),
           "suppress-debug-info": ("-lineinfo",)}
# Rows that print and stop (no compile).
NO_COMPILE = {"help", "version", "list-arch", "list-version"}


@dataclass
class Row:
    label: str
    args: list[str]                     # the option's part of the command line
    output: str = OUTPUT
    base: list[str] | None = None       # the same command without the option
    input_name: str = INPUT
    checks: dict[str, str] = field(default_factory=dict)   # column -> "" (ok) or what differs

    @property
    def ok(self) -> bool:
        return not any(v for k, v in self.checks.items() if k != "tkinfo" and k != "note")


def rows(options: list[HelpOption]) -> list[Row]:
    out = []
    for o in options:
        spellings = [f"--{o.long}"] + ([f"-{o.alias}"] if o.alias != o.long else [])
        ctx = list(CONTEXT.get(o.long, ()))
        if o.long in NO_COMPILE:
            for s in spellings:
                out.append(Row(s, [s]))
            continue
        if o.long == "gpu-name":
            for v in o.allowed:
                out.append(Row(f"-arch={v}", [f"-arch={v}"]))
            out.append(Row(f"--gpu-name {ARCH}", ["--gpu-name", ARCH]))
            continue
        if o.long == "input-as-string":
            for s in spellings:
                out.append(Row(f"{s} <probe>", [s, FILES[INPUT]], input_name=""))
            continue
        if o.long == "compile-as-tools-patch":
            for s in spellings:
                out.append(Row(f"{s} (functions only)", [s], input_name="funcs.ptx", base=[]))
        if o.long == "apply-controls":
            for s in spellings:
                out.append(Row(f"{s} {OPTIONS_FILE}", [s, OPTIONS_FILE]))
            continue
        if not o.placeholder and o.long not in VALUES:
            # (ptxas's help shows no placeholder for the cache options, which take one)
            values: tuple[str | None, ...] = (None,)
        elif o.allowed:
            values = o.allowed
        elif o.placeholder == "<true|false>":
            values = ("true", "false")
        else:
            values = VALUES.get(o.long, ())
        for v in values:
            for i, s in enumerate(spellings):
                if v is None:
                    args = [s]
                elif i == 0:
                    args = [f"{s}={v}"]
                else:
                    args = [s, v]
                output = v if o.long == "output-file" else OUTPUT
                label = " ".join(ctx + args)
                row = Row(label, ctx + args, output=output, base=ctx or [])
                if o.long == "output-file":
                    row.args = args             # no -o of our own below
                out.append(row)
    return out


def command(row: Row, extra: list[str] | None = None) -> list[str]:
    args = list(extra if extra is not None else row.args)
    if row.label.startswith("-arch=") or row.label.startswith("--gpu-name"):
        head = []
    else:
        head = [f"-arch={ARCH}"]
    tail = [row.input_name] if row.input_name else []
    if row.output == OUTPUT:
        tail += ["-o", OUTPUT]
    return head + args + tail


def run_ptxas(argv: list[str], output: str) -> oracle.ToolRun:
    inputs = {n: t.encode() for n, t in FILES.items()}
    return oracle._run_cached("ptxas", argv, inputs, output)


def run_ours(argv: list[str], output: str) -> oracle.ToolRun:
    from ptx2sass import cli
    with tempfile.TemporaryDirectory(prefix="ptx2sass-audit-") as tmp:
        for n, t in FILES.items():
            Path(tmp, n).write_text(t)
        here = os.getcwd()
        out, err = io.StringIO(), io.StringIO()
        os.chdir(tmp)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                rc = cli.main(list(argv))
        finally:
            os.chdir(here)
        path = Path(tmp, output)
        data = path.read_bytes() if path.is_file() else None
    return oracle.ToolRun(rc, out.getvalue(), err.getvalue(), data)


def as_ours(text: str) -> str:
    return re.sub(r"(?m)^ptxas ", "ptx2sass ", timeless(text))


def timeless(text: str) -> str:
    """-v's compile times, which no two runs share, and register counts, which are the
    code generators' own (not the options')."""
    text = re.sub(r"Used \d+ registers", "Used N registers", text)
    return re.sub(r"Compile time = [0-9.]+ ms", "Compile time = T ms", text)


# What a cubin is, for comparing effects -----------------------------------------------------

def _sections(cubin: bytes) -> tuple[int, int, list[str], dict[str, bytes]]:
    """ELF type, flags, section names in file order, and the notes' contents."""
    e_type, = struct.unpack_from("<H", cubin, 16)
    e_flags, = struct.unpack_from("<I", cubin, 48)
    shoff, = struct.unpack_from("<Q", cubin, 40)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 58)
    heads = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * shentsize) for i in range(shnum)]
    strtab = heads[shstrndx]
    names_at = cubin[strtab[4]:strtab[4] + strtab[5]]

    def name(off: int) -> str:
        return names_at[off:names_at.index(b"\0", off)].decode()
    names = [name(h[0]) for h in heads[1:]]
    notes = {name(h[0]): cubin[h[4]:h[4] + h[5]] for h in heads[1:] if h[1] == 7}
    return e_type, e_flags, names, notes


def tool_args(cubin: bytes) -> str | None:
    """The command line `.note.nv.tkinfo` records."""
    from encoder.cubin import ToolkitInfo
    note = _sections(cubin)[3].get(".note.nv.tkinfo")
    if note is None:
        return None
    namesz, descsz, _ = struct.unpack_from("<III", note)
    desc = note[12 + ((namesz + 3) & ~3):][:descsz]
    try:
        return ToolkitInfo.from_desc(desc).tool_args
    except (ValueError, struct.error, UnicodeDecodeError):
        return None


def sass(cubin: bytes) -> list[str]:
    text = oracle.nvdisasm(cubin, ("-c",))
    lines = []
    for line in text.splitlines():
        m = re.match(r"\s+/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;?\s*$", line)
        if m and not m.group(1).startswith("NOP"):
            lines.append(" ".join(m.group(1).split()))
    return lines


MEMORY = re.compile(r"^(?:@!?U?P\w+ )?((?:LDG|STG|LD|ST|ATOM|RED)(?:\.\w+)*)\b")


def memory_ops(code: list[str]) -> list[str]:
    return sorted({m.group(1) for c in code if (m := MEMORY.match(c))})


def features(cubin: bytes) -> dict:
    e_type, e_flags, names, _ = _sections(cubin)
    code = sass(cubin)
    return {"header": (e_type, e_flags), "sections": sorted(names), "code": code,
            "memory": memory_ops(code)}


def effect(before: dict, after: dict) -> set[str]:
    return {k for k in ("header", "sections", "code", "memory") if before[k] != after[k]}


# The audit ----------------------------------------------------------------------------------

def check(row: Row, cache: dict) -> Row:
    argv = command(row)
    theirs = run_ptxas(argv, row.output)
    ours = run_ours(argv, row.output)
    c = row.checks
    c["rc"] = "" if ours.returncode == theirs.returncode else f"{ours.returncode} vs {theirs.returncode}"
    c["stderr"] = "" if timeless(ours.stderr) == as_ours(theirs.stderr) else "differs"
    c["stdout"] = "" if bool(ours.stdout) == bool(theirs.stdout) else "differs"
    c["output"] = "" if (ours.output is None) == (theirs.output is None) else (
        "ours only" if ours.output is not None else "theirs only")
    c["loads"] = ""
    if ours.output is not None:
        try:
            sass(ours.output)
        except oracle.OracleFailed as e:
            c["loads"] = str(e)[:80]
    c["effect"] = ""
    c["tkinfo"] = ""
    if ours.output is not None and theirs.output is not None:
        ta, oa = tool_args(theirs.output), tool_args(ours.output)
        c["tkinfo"] = "" if ta == oa else f"{oa!r} vs {ta!r}"
        if row.base is not None and not c["loads"]:
            key = (row.input_name, *row.base)
            if key not in cache:
                bargv = command(row, row.base)
                cache[key] = (run_ptxas(bargv, OUTPUT), run_ours(bargv, OUTPUT))
            tb, ob = cache[key]
            if tb.output is not None and ob.output is not None:
                ft, fo = features(theirs.output), features(ours.output)
                et = effect(features(tb.output), ft)
                eo = effect(features(ob.output), fo)
                if "memory" in et and fo["memory"] != ft["memory"]:
                    c["effect"] = f"memory ops {fo['memory']} vs {ft['memory']}"
                elif (et - {"code"}) != (eo - {"code"}):
                    c["effect"] = f"{sorted(eo)} vs {sorted(et)}"
                elif "code" in et and "code" not in eo:
                    c["note"] = "code changes (theirs only)"
                elif "code" in eo and "code" not in et:
                    c["note"] = "code changes (ours only)"
    if c["stderr"]:
        c["note"] = (c.get("note", "") + f" ours={ours.stderr.strip()[:160]!r} "
                     f"theirs={as_ours(theirs.stderr).strip()[:160]!r}").strip()
    return row


def audit(only: str | None = None) -> list[Row]:
    table = rows(help_options(ptxas_help()))
    if only:
        table = [r for r in table if only in r.label]
    cache: dict = {}
    return [check(r, cache) for r in table]


def summary(table: list[Row]) -> dict:
    columns = ("rc", "stderr", "stdout", "output", "loads", "effect", "tkinfo")
    return {"rows": len(table), "matching": sum(r.ok for r in table),
            "differing": sum(not r.ok for r in table),
            "tkinfo equal": sum(not r.checks.get("tkinfo") for r in table),
            **{f"{c} differs": sum(bool(r.checks.get(c)) for r in table) for c in columns}}


def main(argv: list[str] | None = None) -> int:
    global ARCH
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="rows whose label holds this text")
    ap.add_argument("--arch", default="sm_89", help="the target of every row but the -arch ones")
    ap.add_argument("--input", help="a PTX file to run the rows on instead of the probe module")
    ap.add_argument("--json", help="write the rows here")
    ap.add_argument("--verbose", action="store_true", help="print matching rows too")
    a = ap.parse_args(argv)
    ARCH = a.arch
    if a.input:
        FILES[INPUT] = Path(a.input).read_text()
    table = audit(a.only)
    for r in table:
        if a.verbose or not r.ok:
            bad = {k: v for k, v in r.checks.items() if v}
            print(f"{'ok  ' if r.ok else 'DIFF'} {r.label[:60]:60} {bad}")
    s = summary(table)
    print(json.dumps(s))
    if a.json:
        Path(a.json).write_text(json.dumps(
            {"summary": s, "rows": [{"label": r.label, "argv": command(r), "ok": r.ok,
                                     "checks": r.checks} for r in table]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
