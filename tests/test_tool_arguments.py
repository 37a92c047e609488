"""`.note.nv.tkinfo`'s command line ("Tool Command Line Arguments") and, under -g, the
output file's name at the start of its strings, as ptxas 13.5.37 records them (ours wrote
`-arch sm_XX ` whatever the options). The order (ptx2sass/tool_arguments.py) was read off
hand-picked option sets; the seeded random sets below were not looked at while writing it."""
from __future__ import annotations

import random
import struct

import pytest

from encoder.cubin import ToolkitInfo
from ptx2sass import cli, oracle
from ptx2sass import options as opt
from tools import ptxas_options_audit as audit

FLAGS = ("suppress-stack-size-warning", "verbose", "verbose2", "warn-on-local-memory-usage",
         "warn-on-spills", "warn-on-double-precision-use", "dont-merge-basicblocks",
         "return-at-end", "disable-optimizer-constants", "override-directive-values",
         "generate-line-info", "sp-bounds-check", "suppress-double-demote-warning",
         "disable-warnings", "compile-only", "optimize-float-atomics", "preserve-relocs",
         "make-errors-visible-at-exit", "jobserver", "suppress-sparse-mma-advisory-info",
         "suppress-async-bulk-multicast-advisory-warning", "compiler-annotations",
         "suppress-position-independent-code-warning", "g-tensor-memory-access-check",
         "gno-tensor-memory-access-check", "gno-fabric-access-check", "extensible-whole-program",
         "legacy-bar-warp-wide-behavior", "suppress-debug-info")
VALUED = {"entry": ("k",), "maxrregcount": ("32", "archmax"), "device-function-maxrregcount": ("40",),
          "register-usage-level": ("3", "7"), "device-stack-protector": ("false",),
          "opt-level": ("1", "3"), "Ofast-compile": ("0", "min"), "def-load-cache": ("cg", "cs"),
          "def-store-cache": ("wt",), "force-load-cache": ("ca",), "force-store-cache": ("cs",),
          "machine": ("64",), "split-compile": ("2", "0"), "fmad": ("true", "false"),
          "allow-expensive-optimizations": ("true", "false"), "position-independent-code": ("false",),
          "enable-func-clone-sc": ("false",), "minnctapersm": ("2",), "maxntid": ("64", "32,2"),
          "sanitize": ("threadsteer",)}


def _random_command(seed: int, debug: bool) -> list[str]:
    rng = random.Random(seed)
    names = rng.sample(FLAGS, rng.randint(2, 10)) + rng.sample(sorted(VALUED), rng.randint(2, 8))
    rng.shuffle(names)
    args = []
    for name in names:
        o = opt.BY_LONG[name]
        if debug and name in ("opt-level", "Ofast-compile"):
            continue
        if name not in VALUED:
            args.append(rng.choice((f"--{o.name}", f"-{o.alias}")))
            continue
        value = rng.choice(VALUED[name])
        args += rng.choice(([f"--{o.name}={value}"], [f"-{o.alias}", value], [f"--{o.name}", value]))
    return (["-g", "-O0"] if debug else []) + args


# (command without input and output, output name): hand-picked rows, then seeded random sets
CASES = [
    (["-arch=sm_89"], "out.cubin"),
    (["-arch=sm_89", "-O3", "-O2", "-m64", "-maxntid", "64", "-maxntid", "2"], "out.cubin"),
    (["-arch=sm_90", "-arch=sm_89", "-e", "k", "-e", "k2", "-c"], "out.cubin"),
    (["-arch=sm_89", "-optf", audit.OPTIONS_FILE, "-fmad=true", "-fmad=false"], "out.cubin"),
    (["-arch=sm_89", "-O", "--regAllocOptLevel=2", "-v"], "out.cubin"),
    (["-arch=sm_89", "-g", "-lineinfo", "-suppress-debug-info"], "deep.cubin"),
    (["-arch=sm_89", "-g", "-O0", "--output-file=other.o"], "other.o"),
    (["-arch=sm_89", "-g"], "elf.o"),
    *((["-arch=sm_89", *_random_command(seed, False)], "out.cubin") for seed in range(7100, 7108)),
    *((["-arch=sm_89", *_random_command(seed, True)], "out.cubin") for seed in range(7200, 7204)),
]
TWO_KERNELS = audit.PROBE + audit.PROBE[audit.PROBE.index(".visible"):].replace(".entry k(", ".entry k2(")


def _note(cubin: bytes) -> tuple[str, str]:
    note = audit._sections(cubin)[3][".note.nv.tkinfo"]
    namesz, descsz, _ = struct.unpack_from("<III", note)
    info = ToolkitInfo.from_desc(note[12 + ((namesz + 3) & ~3):][:descsz])
    return info.tool_args, info.object_name


@pytest.mark.parametrize("argv,output", CASES, ids=[" ".join(c)[:70] for c, _ in CASES])
def test_recorded_command_line_as_ptxas(argv, output, tmp_path, monkeypatch, capsys):
    files = {**audit.FILES, "probe.ptx": TWO_KERNELS}
    full = [*argv, "probe.ptx"] + ([] if output == "elf.o" else ["-o", output])
    theirs = oracle._run_cached("ptxas", full, {n: t.encode() for n, t in files.items()}, output)
    if theirs.output is None:
        pytest.skip(f"ptxas writes nothing here: {theirs.stderr.strip()[:120]}")
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert cli.main(full) == 0, capsys.readouterr().err
    assert _note((tmp_path / output).read_bytes()) == _note(theirs.output)


def test_note_round_trip_keeps_the_object_name():
    info = ToolkitInfo("ptxas", "v", "b", "probe.ptx -g  -arch sm_89 ", object_name="x.cubin")
    assert ToolkitInfo.from_desc(info.desc()) == info
    assert info.desc()[24:].startswith(b"x.cubin\0ptxas\0")
