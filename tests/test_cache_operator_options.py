"""ptxas's cache-operator options (`-dlcm`, `-flcm`, `-dscm`, `-fscm`) change the global and
generic loads and stores as ptxas 13.5.37 changes them (they were accepted and ignored).

Each case compiles one module with the same options through ptxas (the oracle) and through
the `ptx2sass` command, and compares every global/generic access's SASS spelling, keyed by
its address offset (each access in the modules has an offset of its own)."""
from __future__ import annotations

import re

import pytest

from ptx2sass import cli, oracle

HEAD = ".version 8.0\n.target sm_89\n.address_size 64\n"

# every cache operator, .nc with and without one, strong accesses, generic ones
OPERATORS = HEAD + """
.visible .entry k(.param .u64 p)
{
\t.reg .b64 %rd<4>;
\t.reg .b32 %r<20>;
\tld.param.u64 %rd1, [p];
\tcvta.to.global.u64 %rd2, %rd1;
\tld.global.u32 %r1, [%rd2];
\tld.global.ca.u32 %r2, [%rd2+256];
\tld.global.cg.u32 %r3, [%rd2+512];
\tld.global.cs.u32 %r4, [%rd2+768];
\tld.global.lu.u32 %r5, [%rd2+1024];
\tld.global.cv.u32 %r6, [%rd2+1280];
\tld.global.nc.u32 %r7, [%rd2+1536];
\tld.volatile.global.u32 %r8, [%rd2+1792];
\tld.relaxed.gpu.global.u32 %r9, [%rd2+2048];
\tld.u32 %r10, [%rd1+2304];
\tld.global.nc.cs.u32 %r11, [%rd2+2560];
\tadd.u32 %r13, %r1, %r2;
\tadd.u32 %r13, %r13, %r3;
\tadd.u32 %r13, %r13, %r4;
\tadd.u32 %r13, %r13, %r5;
\tadd.u32 %r13, %r13, %r6;
\tadd.u32 %r13, %r13, %r7;
\tadd.u32 %r13, %r13, %r8;
\tadd.u32 %r13, %r13, %r9;
\tadd.u32 %r13, %r13, %r10;
\tadd.u32 %r13, %r13, %r11;
\tst.global.u32 [%rd2+4096], %r13;
\tst.global.wb.u32 [%rd2+4352], %r13;
\tst.global.cg.u32 [%rd2+4608], %r13;
\tst.global.cs.u32 [%rd2+4864], %r13;
\tst.global.wt.u32 [%rd2+5120], %r13;
\tst.volatile.global.u32 [%rd2+5376], %r13;
\tst.relaxed.gpu.global.u32 [%rd2+5632], %r13;
\tst.u32 [%rd1+5888], %r13;
\tret;
}
"""
# qualifiers beside the operator: .weak, L2 sizes and hints, L1 eviction priorities (which
# keep an access as written), vectors, ldu, shared and local accesses
QUALIFIERS = HEAD + """
.visible .entry k(.param .u64 p, .param .u64 c)
{
\t.reg .b64 %rd<4>;
\t.reg .b32 %r<20>;
\t.shared .align 4 .b8 sh[64];
\tld.param.u64 %rd1, [p];
\tld.param.u64 %rd3, [c];
\tcvta.to.global.u64 %rd2, %rd1;
\tld.weak.global.u32 %r1, [%rd2+256];
\tld.global.L2::128B.u32 %r2, [%rd2+512];
\tld.global.L2::cache_hint.u32 %r3, [%rd2+768], %rd3;
\tld.global.L1::evict_last.u32 %r4, [%rd2+1024];
\tld.global.v2.u32 {%r5, %r6}, [%rd2+1280];
\tldu.global.u32 %r7, [%rd2+1536];
\tld.global.nc.L1::no_allocate.u32 %r8, [%rd2+1792];
\tld.shared.u32 %r10, [sh+4];
\tld.global.L1::evict_normal.u32 %r11, [%rd2+2048];
\tld.global.ca.L2::128B.u32 %r12, [%rd2+2304];
\tadd.u32 %r13, %r1, %r2;
\tadd.u32 %r13, %r13, %r3;
\tadd.u32 %r13, %r13, %r4;
\tadd.u32 %r13, %r13, %r5;
\tadd.u32 %r13, %r13, %r6;
\tadd.u32 %r13, %r13, %r7;
\tadd.u32 %r13, %r13, %r8;
\tadd.u32 %r13, %r13, %r10;
\tadd.u32 %r13, %r13, %r11;
\tadd.u32 %r13, %r13, %r12;
\tst.weak.global.u32 [%rd2+2560], %r13;
\tst.global.L1::no_allocate.u32 [%rd2+2816], %r13;
\tst.global.L2::cache_hint.u32 [%rd2+3072], %r13, %rd3;
\tst.global.v2.u32 [%rd2+3328], {%r13, %r13};
\tst.shared.u32 [sh], %r13;
\tst.global.L1::evict_last.u32 [%rd2+3584], %r13;
\tret;
}
"""
MODULES = {"operators": OPERATORS, "qualifiers": QUALIFIERS}

CASES = [("operators", "sm_89", opts) for opts in (
    "-dlcm=ca", "-dlcm=cg", "-dlcm=cs", "-dlcm=lu", "-dlcm=cv", "-flcm=ca", "-flcm=cs", "-flcm=lu",
    "-flcm=cv", "-dscm=wb", "-dscm=cs", "-fscm=cg", "-fscm=wt", "-dlcm=cs -flcm=cg",
    "-dlcm=lu -dscm=wt")] + [("qualifiers", "sm_89", opts) for opts in (
    "-dlcm=cs", "-flcm=cg", "-dscm=cs", "-fscm=wb")] + [
    ("operators", "sm_90", "-flcm=cs -dscm=cg"), ("qualifiers", "sm_120", "-dlcm=cv -fscm=cs")]

ACCESS = re.compile(r"\b((?:LDG|STG|LD|ST)(?:\.[A-Z0-9]+)*) .*?\[R\d+(?:\.64)?(?:\+(0x[0-9a-f]+))?\]")


def _accesses(cubin: bytes) -> dict[int, str]:
    """Global/generic accesses by their address offset."""
    found = {}
    for line in oracle.nvdisasm(cubin, ("-c",)).splitlines():
        m = ACCESS.search(line)
        if m:
            found[int(m.group(2) or "0", 16)] = m.group(1)
    return found


def _ours(src: str, argv: list[str], tmp_path, monkeypatch, capsys) -> bytes:
    (tmp_path / "m.ptx").write_text(src)
    monkeypatch.chdir(tmp_path)
    assert cli.main([*argv, "m.ptx", "-o", "m.cubin"]) == 0, capsys.readouterr().err
    return (tmp_path / "m.cubin").read_bytes()


@pytest.mark.parametrize("module,arch,opts", CASES, ids=[f"{m}-{a}-{o}" for m, a, o in CASES])
def test_accesses_as_ptxas_writes_them(module, arch, opts, tmp_path, monkeypatch, capsys):
    src = MODULES[module]
    theirs = oracle.ptxas(src, arch, tuple(opts.split()))
    assert theirs.ok, theirs.stderr
    expected = _accesses(theirs.output)
    plain = _accesses(oracle.ptxas(src, arch).output)
    assert expected != plain, "the options change nothing here: a case that cannot fail"
    ours = _accesses(_ours(src, [f"-arch={arch}", *opts.split()], tmp_path, monkeypatch, capsys))
    assert ours == expected
