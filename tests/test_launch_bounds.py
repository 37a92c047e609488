"""`.maxntid`/`.reqntid` with `.minnctapersm`: the register limit and EIATTR_MAXREG_COUNT
ptxas derives from them, and its rule for ignoring a `.minnctapersm` whose CTAs cannot be
resident on one SM (the real-world corpus's `__launch_bounds__(1024, 2)` on sm_89: ptxas
keeps 64 registers, where taking the directive at its word spilled to local memory)."""
from __future__ import annotations

import pytest

from ptx2sass import cli, oracle
from ptx2sass.codegen import compile_ptx
from ptx2sass.encoder.arch import target
from ptx2sass.encoder.cubin import read_cubin
from ptx2sass.launch_bounds import ignored_minnctapersm

KERNEL = """\
.version 8.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 p) {directives}
{{
 .reg .b64 %rd<2>; .reg .b32 %r<3>;
 ld.param.u64 %rd1, [p]; mov.u32 %r1, %tid.x; st.global.u32 [%rd1], %r1; ret;
}}
"""

# (threads, CTAs): in range on some archs and not on others (probed with ptxas 13.5)
SHAPES = [(97, 15), (768, 2), (769, 2), (1024, 2), (64, 24), (32, 17), (32, 25), (32, 33),
          (512, 3), (512, 4), (256, 9), (64, 32)]
ARCHS = ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"]


def _ptx(arch: str, directives: str) -> str:
    return KERNEL.format(arch=arch, directives=directives)


@pytest.mark.parametrize("arch", ARCHS)
def test_ignored_minnctapersm_is_ptxas_own(arch):
    """ptxas warns, in its words, exactly where the Target's resident limits say the CTAs
    do not fit."""
    wrong = []
    for threads, ctas in SHAPES:
        run = oracle.ptxas(_ptx(arch, f".maxntid {threads} .minnctapersm {ctas}"), arch)
        assert run.returncode == 0, run.stderr
        theirs = run.stderr.strip().removeprefix("ptxas warning : ") or None
        ours = ignored_minnctapersm("k", threads, ctas, target(arch))
        if ours != theirs:
            wrong.append((threads, ctas, theirs, ours))
    assert not wrong


@pytest.mark.parametrize("arch", ["sm_80", "sm_89", "sm_90", "sm_120"])
@pytest.mark.parametrize("directives", [
    ".maxntid 1024", ".maxntid 256", ".maxntid 128, 1, 1 .minnctapersm 4", ".reqntid 256",
    ".maxntid 1024, 1, 1 .minnctapersm 2", ".maxntid 16, 1, 1 .minnctapersm 2",
    ".reqntid 97, 1, 1 .minnctapersm 15", ".maxntid 16, 16, 1 .minnctapersm 7", ".maxntid 800",
    ".maxntid 769 .minnctapersm 2", ".maxntid 32 .minnctapersm 25", ".maxntid 352 .minnctapersm 3",
    ".maxntid 160", ".maxntid 288", ".maxntid 96 .minnctapersm 33"])
def test_maxreg_record_is_ptxas_own(arch, directives):
    ptx = _ptx(arch, directives)
    theirs = read_cubin(oracle.ptxas(ptx, arch).output).kernel("k").maxreg_count
    ours = read_cubin(compile_ptx(ptx, arch)).kernel("k").maxreg_count
    assert ours == theirs


@pytest.mark.parametrize("arch,flags", [("sm_89", []), ("sm_89", ["-Werror"]), ("sm_89", ["-w"]),
                                        ("sm_80", []), ("sm_120", [])])
def test_warning_as_ptxas_writes_it(arch, flags, tmp_path, capsys, monkeypatch):
    ptx = _ptx(arch, ".maxntid 1024, 1, 1 .minnctapersm 2")
    ptx += ptx[ptx.index(".visible"):].replace("entry k(", "entry k2(").replace(
        ".maxntid 1024, 1, 1", ".reqntid 16, 16, 1 .minnctapersm 7 ").replace(".minnctapersm 2", "")
    theirs = oracle.ptxas(ptx, arch, tuple(flags), name="lb.ptx")
    (tmp_path / "lb.ptx").write_text(ptx)
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    rc = cli.main([f"-arch={arch}", *flags, "lb.ptx", "-o", "lb.cubin"])
    err = capsys.readouterr().err
    assert rc == theirs.returncode
    assert err == theirs.stderr.replace("ptxas ", "ptx2sass ")
