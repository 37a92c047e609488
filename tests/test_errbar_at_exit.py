"""--make-errors-visible-at-exit (was accepted and ignored) and -g's barriers before EXIT on
sm_90+ (CGAERRBAR was missing), against ptxas 13.5.37: the barrier instructions around
each EXIT, in order, and the `.nv.info` records (EIATTR_GEN_ERRBAR_AT_EXIT per function)."""
from __future__ import annotations

import re

import pytest

from ptx2sass import cli, oracle
from ptx2sass.encoder.cubin import read_cubin

GUARDED_EXIT = """.version 8.0
.target sm_75
.address_size 64
.visible .entry k(.param .u64 p)
{
\t.reg .b64 %rd<3>;
\t.reg .b32 %r<3>;
\t.reg .pred %p1;
\tld.param.u64 %rd1, [p];
\tmov.u32 %r1, %tid.x;
\tsetp.gt.u32 %p1, %r1, 5;
\t@%p1 exit;
\tmul.wide.u32 %rd2, %r1, 4;
\tadd.s64 %rd2, %rd1, %rd2;
\tst.global.u32 [%rd2], %r1;
\tret;
}
"""
# two kernels and a function: a record per function
TWO = GUARDED_EXIT.replace(".visible .entry k(", """.func (.param .b32 r) twice(.param .b32 a)
{
\t.reg .b32 %t<3>;
\tld.param.b32 %t1, [a];
\tadd.s32 %t2, %t1, %t1;
\tst.param.b32 [r], %t2;
\tret;
}

.visible .entry k(""").replace("st.global.u32 [%rd2], %r1;", """{
\t.param .b32 a0;
\t.param .b32 r0;
\tst.param.b32 [a0], %r1;
\tcall.uni (r0), twice, (a0);
\tld.param.b32 %r2, [r0];
\t}
\tst.global.u32 [%rd2], %r2;""") + GUARDED_EXIT[GUARDED_EXIT.index(".visible"):].replace(
    ".entry k(", ".entry k2(")

CASES = [(m, a, o) for m in ("guarded", "two") for a in ("sm_75", "sm_89", "sm_90", "sm_120")
         for o in ("-make-errors-visible-at-exit", "-make-errors-visible-at-exit -c", "-g")]
BARRIERS = re.compile(r"\b(MEMBAR\.[A-Z.]+|CGAERRBAR|ERRBAR|EXIT)\b")


def _barriers(cubin: bytes) -> list[str]:
    return BARRIERS.findall(oracle.nvdisasm(cubin, ("-c",)))


def _records(cubin: bytes) -> list[str]:
    """The module `.nv.info` section's attributes, in order (with the functions they name)."""
    listing = oracle.cuobjdump_elf(cubin)
    part = listing[listing.index("\n.nv.info\n") + 1:].split("\n\n")[0]
    return re.findall(r"Attribute:\s+(\S+)(?:\s+Format:\s+\S+\s+Value:\s+function: (\S+?)\()?", part)


def _marked(records: list) -> list[str]:
    """The kernels whose FRAME_SIZE record is followed by GEN_ERRBAR_AT_EXIT."""
    return [name for (attr, name), (nxt, _) in zip(records, records[1:])
            if attr == "EIATTR_FRAME_SIZE" and name in ("k", "k2") and nxt == "EIATTR_GEN_ERRBAR_AT_EXIT"]


@pytest.mark.parametrize("module,arch,options", CASES, ids=[f"{m}-{a}-{o}" for m, a, o in CASES])
def test_barriers_before_exit_as_ptxas(module, arch, options, tmp_path, monkeypatch, capsys):
    src = {"guarded": GUARDED_EXIT, "two": TWO}[module]
    theirs = oracle.ptxas(src, arch, tuple(options.split()))
    assert theirs.ok, theirs.stderr
    plain = oracle.ptxas(src, arch, tuple(o for o in options.split() if o != "-make-errors-visible-at-exit"))
    assert _barriers(plain.output) != _barriers(theirs.output) or "-g" in options
    (tmp_path / "m.ptx").write_text(src)
    monkeypatch.chdir(tmp_path)
    assert cli.main([f"-arch={arch}", *options.split(), "m.ptx", "-o", "m.cubin"]) == 0, \
        capsys.readouterr().err
    ours = (tmp_path / "m.cubin").read_bytes()
    assert _barriers(ours) == _barriers(theirs.output)
    if module == "guarded":
        assert _records(ours) == _records(theirs.output)
    else:   # (ptxas keeps `twice` out of line, we inline it: the kernels' marks compared)
        assert _marked(_records(ours)) == _marked(_records(theirs.output)) == ["k", "k2"] or \
            _marked(_records(ours)) == _marked(_records(theirs.output)) == ["k2", "k"]
    assert sum(k.is_entry for k in read_cubin(ours).kernels) == (2 if module == "two" else 1)
