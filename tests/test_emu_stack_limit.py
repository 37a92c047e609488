"""The per-thread stack limit (cudaLimitStackSize) and SR_LMEMHIOFF, which ptxas's -g and -O0
code reads to trap (`BPT.TRAP`) when the stack pointer R1 goes below it. Measured on an H200
(driver 580.159, sm_90; ptxas -O0's probe kernel below with its `S2R SR_VIRTUALSMID` word made
`S2R SR_LMEMHIOFF`, through cuCtxSetLimit(CU_LIMIT_STACK_SIZE)): the default limit is 1024,
the driver rounds a limit up to 16 bytes (300 -> 304, 8 -> 16), and the stack pointer before
the kernel's 0x10 frame (c[0x0][0x28] = 0xFFFCC0 for every limit) less SR_LMEMHIOFF is the
limit: 1024, 4096, 65536, 304, 16 (the frame counts inside the limit). The emulator read 0, so a -g program that overflows its stack ran
R1 below the local window (an out-of-bounds fault at 0xfffffff0) instead of trapping, and a
launch could not raise the limit as a program does with cudaDeviceSetLimit."""
import json

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.errors import EmuFault
from ptx2sass.emu.launch import run

# (limit set, SP0 - SR_LMEMHIOFF on the H200)
MEASURED = [(None, 1024), (1024, 1024), (4096, 4096), (65536, 65536), (300, 304), (8, 16)]

PROBE = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k2(.param .u64 out)
{
  .reg .b32 %r<10>; .reg .b64 %rd<6>;
  .local .align 4 .b8 arr[16];
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 16;
  add.s64 %rd3, %rd1, %rd2;
  mov.u32 %r2, %smid;
  mov.u32 %r3, arr;
  st.local.u32 [arr], %r1;
  ld.local.u32 %r5, [arr];
  st.global.u32 [%rd3], %r2;
  st.global.u32 [%rd3+4], %r3;
  st.global.u32 [%rd3+8], %r5;
  ret;
}
"""


def _probe_cubin(frame: int = 16) -> bytes:
    """ptxas -O0's cubin of PROBE (its local array `frame` bytes) with the %smid read turned
    into a read of SR_LMEMHIOFF (the special-register field, bits 72-79, copied from ptxas's
    own stack-check S2R)."""
    src = PROBE.replace("arr[16]", f"arr[{frame}]")
    built = oracle.ptxas(src, "sm_90", ("-O0",), name="probe.ptx")
    assert built.ok, built.stderr
    cubin = bytearray(built.output)
    listing = oracle.nvdisasm(bytes(cubin))
    offsets = {}
    for line in listing.splitlines():
        for sr in ("SR_LMEMHIOFF", "SR_VIRTUALSMID"):
            if f"S2R" in line and sr in line and "/*" in line:
                offsets[sr] = int(line.split("/*")[1].split("*/")[0], 16)
    assert set(offsets) == {"SR_LMEMHIOFF", "SR_VIRTUALSMID"}, listing
    from elftools.elf.elffile import ELFFile
    import io
    text = ELFFile(io.BytesIO(bytes(cubin))).get_section_by_name(".text.k2")["sh_offset"]
    cubin[text + offsets["SR_VIRTUALSMID"] + 9] = cubin[text + offsets["SR_LMEMHIOFF"] + 9]
    assert oracle.nvdisasm(bytes(cubin)).count("SR_LMEMHIOFF") == 2
    return bytes(cubin)


@pytest.mark.parametrize("limit,expected", MEASURED)
def test_lmemhioff_is_the_limit_below_the_initial_stack_pointer(limit, expected):
    cubin = _probe_cubin()
    out = np.zeros((32, 4), np.uint32)
    kw = {} if limit is None else {"stack_bytes": limit}
    run(cubin, "k2", 1, 32, [out], hazard_check=False, **kw)
    floor, sp_after_frame = out[:, 0], out[:, 1]
    np.testing.assert_array_equal(out[:, 2], np.arange(32))
    np.testing.assert_array_equal(sp_after_frame + 0x10 - floor, expected)
    # the initial stack pointer c[0x0][0x28] was 0xFFFCC0 for every limit
    np.testing.assert_array_equal(sp_after_frame + 0x10, 0xFFFCC0)


@pytest.mark.parametrize("limit,expected", [(None, 2048), (300, 2048), (4096, 4096)])
def test_a_frame_larger_than_the_limit_gets_its_stack(limit, expected):
    """The same probe with a 2048-byte frame (a known stack over the 1 KiB default): on the
    H200 the driver raised the limit to 2048 (SR_LMEMHIOFF = the stack pointer after the
    frame), and a limit of 4096 stayed 4096."""
    out = np.zeros((32, 4), np.uint32)
    kw = {} if limit is None else {"stack_bytes": limit}
    run(_probe_cubin(2048), "k2", 1, 32, [out], hazard_check=False, **kw)
    np.testing.assert_array_equal(0xFFFCC0 - out[:, 0], expected)
    np.testing.assert_array_equal(out[:, 1], 0xFFFCC0 - 2048)


RECURSIVE = """.version 8.0
.target sm_89
.address_size 64
.func (.param .b32 r) tri(.param .b32 n)
{
  .reg .b32 %r<6>; .reg .pred %p;
  .local .align 4 .b8 buf[64];
  ld.param.b32 %r1, [n];
  setp.le.s32 %p, %r1, 0;
  @%p bra DONE;
  st.local.u32 [buf], %r1;
  add.s32 %r2, %r1, -1;
  { .param .b32 a; .param .b32 b; st.param.b32 [a], %r2; call (b), tri, (a); ld.param.b32 %r3, [b]; }
  ld.local.u32 %r4, [buf];
  add.s32 %r1, %r3, %r4;
DONE:
  st.param.b32 [r], %r1;
  ret;
}
.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<4>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r3, %tid.x;
  mul.wide.u32 %rd3, %r3, 8;
  add.s64 %rd2, %rd2, %rd3;
  ld.global.u32 %r1, [%rd2];
  { .param .b32 a; .param .b32 b; st.param.b32 [a], %r1; call (b), tri, (a); ld.param.b32 %r2, [b]; }
  st.global.u32 [%rd2+4], %r2;
  ret;
}
"""


def _cubins():
    theirs = oracle.ptxas(RECURSIVE, "sm_89", ("-g",), name="k.ptx")
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(RECURSIVE, "sm_89", "k.ptx", debug=True, opt_level=0)
    return {"ptxas": theirs.output, "ours": ours}


def _depths(n):
    data = np.zeros((32, 2), np.int32)
    data[:, 0] = n
    return data


@pytest.mark.parametrize("limit", [None, 4096])
def test_ptxas_debug_code_traps_past_the_stack_limit(limit):
    """40..71 levels of ptxas -g's 0x48-byte frame do not fit in 1 KiB nor in 4 KiB: its check
    traps instead of running the stack out of the local window. On the H200 (the sm_90 build
    of this program) both launches failed ("unspecified launch failure", 719), and under a
    limit of 16384 gave n(n+1)/2."""
    kw = {} if limit is None else {"stack_bytes": limit}
    with pytest.raises(EmuFault, match="trap"):
        run(_cubins()["ptxas"], "k", 1, 32, [_depths(40 + np.arange(32))], hazard_check=False, **kw)


@pytest.mark.parametrize("compiler", ["ptxas", "ours"])
def test_a_raised_stack_limit_runs_deep_recursion(compiler):
    cubin = _cubins()[compiler]
    shallow = _depths(np.arange(32) % 6)
    run(cubin, "k", 1, 32, [shallow], hazard_check=False)
    np.testing.assert_array_equal(shallow[:, 1], [n * (n + 1) // 2 for n in shallow[:, 0]])
    deep = _depths(40 + np.arange(32))
    run(cubin, "k", 1, 32, [deep], hazard_check=False, stack_bytes=16384)
    np.testing.assert_array_equal(deep[:, 1], [n * (n + 1) // 2 for n in deep[:, 0]])


def test_launch_file_takes_the_stack_limit(tmp_path):
    from ptx2sass.emu import cli
    (tmp_path / "k.cubin").write_bytes(_cubins()["ptxas"])
    (tmp_path / "d.bin").write_bytes(_depths(40 + np.arange(32)).tobytes())
    spec = {"kernel": "k", "grid": [1], "block": [32], "stack_bytes": 16384,
            "buffers": {"d": {"file": "d.bin"}}, "params": [{"buffer": "d"}]}
    (tmp_path / "launch.json").write_text(json.dumps(spec))
    assert cli.main([str(tmp_path / "k.cubin"), str(tmp_path / "launch.json"), "--out-dir", str(tmp_path),
                     "--no-hazard-check"]) == 0
    got = np.frombuffer((tmp_path / "d.bin").read_bytes(), np.int32).reshape(32, 2)
    np.testing.assert_array_equal(got[:, 1], [n * (n + 1) // 2 for n in got[:, 0]])
    spec["stack_bytes"] = -1
    (tmp_path / "launch.json").write_text(json.dumps(spec))
    assert cli.main([str(tmp_path / "k.cubin"), str(tmp_path / "launch.json"), "--out-dir", str(tmp_path)]) == 2
