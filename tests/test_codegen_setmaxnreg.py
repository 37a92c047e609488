"""setmaxnreg.{inc,dec}.sync.aligned.u32 (sm_90a, sm_100a/f, sm_103a, sm_120a) against ptxas
13.5: the USETMAXREG code, the kernel records, the refusals and the results in the
emulator (ptxas's cubin and ours against NumPy)."""
import re

import numpy as np
import pytest

from ptx2sass import cli, codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.encoder.cubin import read_cubin
from ptx2sass.errors import CompileError

ARCHS = ["sm_90a", "sm_100a", "sm_120a"]


def _ptx(arch, maxnreg=".maxnreg 128", body=None):
    """A producer/consumer kernel as warp-specialised code writes it: warpgroup 0 gives
    registers back (dec 40), warpgroup 1 takes more (inc 232); each writes tid * 3 + 7
    (plus a sum over a short loop, so that values live across the instruction)."""
    body = body or """
    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p1, %r1, 128;
    @%p1 bra DEC;
    setmaxnreg.inc.sync.aligned.u32 232;
    bra.uni WORK;
DEC:
    setmaxnreg.dec.sync.aligned.u32 40;
WORK:
    mad.lo.u32 %r2, %r1, 3, 7;
    mov.u32 %r3, 0;
LOOP:
    add.u32 %r2, %r2, %r3;
    add.u32 %r3, %r3, 1;
    setp.lt.u32 %p2, %r3, 4;
    @%p2 bra LOOP;
    mul.wide.u32 %rd3, %r1, 4;
    add.u64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r2;"""
    return f""".version 8.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out) {maxnreg}
{{
    .reg .pred %p<3>; .reg .u32 %r<4>; .reg .u64 %rd<5>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;{body}
    ret;
}}
"""


def _run(cubin):
    out = np.zeros(256, np.uint32)
    res = run(cubin, "k", (1, 1, 1), (256, 1, 1), [out])
    assert not res.hazards, res.hazards[:3]
    return out


def _listing(cubin):
    return [ln.split("*/", 1)[1].strip().rstrip(" ;") for ln in oracle.nvdisasm(cubin, ("-c",)).splitlines()
            if re.match(r"\s+/\*[0-9a-f]{4}\*/", ln)]


def _records(cubin):
    """The kernel's `.nv.info.k` records, as cuobjdump prints them; the EXIT's offset left
    out (ptxas's code has no BSSY/BSYNC around the branches to the setmaxnregs: ours does)."""
    elf = oracle.cuobjdump_elf(cubin)
    text = elf.split("\n.nv.info.k\n", 1)[1].split("\n.nv.", 1)[0]
    return re.sub(r"(EIATTR_EXIT_INSTR_OFFSETS\n\tFormat:\tEIFMT_SVAL\n\tValue:\t)\S+", r"\1?", text)


@pytest.mark.parametrize("arch", ARCHS)
def test_setmaxnreg_runs_as_ptxas(arch):
    want = np.arange(256, dtype=np.uint32) * 3 + 7 + 6
    theirs = oracle.ptxas(_ptx(arch), arch).output
    np.testing.assert_array_equal(_run(theirs), want)
    np.testing.assert_array_equal(_run(codegen.compile_ptx(_ptx(arch), arch)), want)


@pytest.mark.parametrize("arch", ARCHS)
def test_setmaxnreg_code_and_records_as_ptxas(arch):
    """inc: a retry loop around USETMAXREG.TRY_ALLOC.CTAPOOL UP0 (sm_90: PLOP3 P0 = UP0,
    @!P0 BRA back; sm_100+: BRA.U !UP0 back); dec: USETMAXREG.DEALLOC.CTAPOOL; the
    records (EIATTR_REG_RECONFIG, MAXREG_COUNT = .maxnreg) the same as ptxas's."""
    ptx = _ptx(arch)
    theirs, ours = oracle.ptxas(ptx, arch).output, codegen.compile_ptx(ptx, arch)
    for cubin in (theirs, ours):
        code = _listing(cubin)
        tries = [i for i, t in enumerate(code) if t.startswith("USETMAXREG.TRY_ALLOC.CTAPOOL UP0, 0xe8")]
        assert len(tries) == 1 and code.count("USETMAXREG.DEALLOC.CTAPOOL 0x28") == 1, code
        i = tries[0]
        if arch == "sm_90a":
            assert code[i + 1] == "PLOP3.LUT P0, PT, PT, PT, UP0, 0x80, 0x0"
            assert code[i + 2].startswith("@!P0 BRA")
        else:
            assert code[i + 1].startswith("BRA.U !UP0")
        # after the divergent branch: the warp synchronised first (ptxas: inside the loop)
        assert code[i - 1] == "WARPSYNC.ALL"
    assert _records(ours) == _records(theirs)
    assert "EIATTR_REG_RECONFIG" in _records(ours)
    # launched with the .maxnreg count (128) as ptxas's: the registers the warps trade
    assert read_cubin(theirs).kernels[0].regcount == read_cubin(ours).kernels[0].regcount == 128


def test_setmaxnreg_dropped_without_maxnreg(tmp_path, capsys, monkeypatch):
    """No `.maxnreg`: ptxas drops the instructions (no USETMAXREG, no REG_RECONFIG) and says
    so once per kernel (info C7508); the code still runs."""
    ptx = _ptx("sm_90a", maxnreg="")
    theirs = oracle.ptxas(ptx, "sm_90a", name="k.ptx")
    assert theirs.ok
    (tmp_path / "k.ptx").write_text(ptx)
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert cli.main(["-arch=sm_90a", "k.ptx", "-o", "out.cubin"]) == 0
    assert capsys.readouterr().err == re.sub(r"(?m)^ptxas ", "ptx2sass ", theirs.stderr)
    ours = (tmp_path / "out.cubin").read_bytes()
    for cubin in (theirs.output, ours):
        assert not any("USETMAXREG" in t for t in _listing(cubin))
        assert "REG_RECONFIG" not in _records(cubin)
    assert _records(ours) == _records(theirs.output)
    np.testing.assert_array_equal(_run(ours), _run(theirs.output))


REFUSALS = [
    ("setmaxnreg.inc.sync.aligned.u32 20;", "sm_90a"),
    ("setmaxnreg.dec.sync.aligned.u32 264;", "sm_100a"),
    ("setmaxnreg.inc.sync.aligned.u32 %r1;", "sm_90a"),
    ("setmaxnreg.inc.sync.u32 240;", "sm_90a"),
    ("setmaxnreg.dec.sync.aligned.u32 40;", "sm_90"),
    ("setmaxnreg.inc.sync.aligned.u32 240;", "sm_100"),
]


@pytest.mark.parametrize("line,arch", REFUSALS)
def test_setmaxnreg_refusals_as_ptxas(line, arch):
    ptx = _ptx(arch, body="\n    " + line)
    theirs = oracle.ptxas(ptx, arch)
    errors = [ln.split("error   : ", 1)[1] for ln in theirs.stderr.splitlines() if "error   : " in ln]
    assert not theirs.ok and errors
    with pytest.raises(CompileError) as e:
        codegen.compile_ptx(ptx, arch)
    assert [d.message for d in getattr(e.value, "diagnostics", None) or [e.value]] == errors


def test_setmaxnreg_dec_above_the_largest_count_is_c7406():
    """dec above both `.maxnreg` and every inc count: ptxas's fatal C7406; below an earlier
    inc's count (inc 240, dec 200 under .maxnreg 128) it is accepted."""
    bad = _ptx("sm_90a", body="\n    setmaxnreg.dec.sync.aligned.u32 240;")
    theirs = oracle.ptxas(bad, "sm_90a")
    assert not theirs.ok
    message = theirs.stderr.split("fatal   : ", 1)[1].splitlines()[0]
    assert message.startswith("(C7406)")
    with pytest.raises(CompileError) as e:
        codegen.compile_ptx(bad, "sm_90a")
    assert e.value.message == message
    good = _ptx("sm_90a", body="\n    setmaxnreg.inc.sync.aligned.u32 240;\n    setmaxnreg.dec.sync.aligned.u32 200;")
    assert oracle.ptxas(good, "sm_90a").ok
    assert any("DEALLOC.CTAPOOL 0xc8" in t for t in _listing(codegen.compile_ptx(good, "sm_90a")))


@pytest.mark.parametrize("maxnreg,options,want", [(128, (), 0x80), (128, ("-maxrregcount", "64"), 0x80),
                                                  (16, (), 0x18), (300, (), 0xff)])
def test_maxreg_count_record_is_maxnreg(maxnreg, options, want):
    """EIATTR_MAXREG_COUNT is the kernel's `.maxnreg` (-maxrregcount does not change it;
    raised to 24, ignored above 255), as ptxas writes it; it was 0xff."""
    ptx = _ptx("sm_90a", f".maxnreg {maxnreg}", body="\n    st.global.u32 [%rd2], 1;")
    theirs = oracle.ptxas(ptx, "sm_90a", options).output
    opts = {"maxrregcount": int(options[1])} if options else {}
    ours = codegen.compile_ptx(ptx, "sm_90a", **opts)
    assert f"EIATTR_MAXREG_COUNT\n\tFormat:\tEIFMT_HVAL\n\tValue:\t{want:#x}" in _records(theirs)
    assert _records(ours) == _records(theirs)
