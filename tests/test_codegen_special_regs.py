"""Every special register the inventory lists for sm_89 read with `mov`: ours vs ptxas in the
emulator (bit for bit where the value is deterministic; clocks and timers run hazard-free and
count up within a warp), the driver's constant-bank words as launched, per-arch facts."""
import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.frontend import inventory
from tools.inventory_coverage import check_form
from tools.inventory_kernels import version_for

def _sreg_forms(sm: int) -> list:
    return [f for f in inventory.forms()
            if f.opcode == "mov" and any(o.kind == "x" for o in f.operands)
            and not f.arch_specific and f.valid_on(sm, version_for(f, sm))]


# sm_90+ forms not handled yet (issue 18, phase 2), each with why; strict: fixing one fails.
# sm_100/120 read the launch's sizes, envregs and cluster shape per cluster size (as ptxas)
SM90_GAPS: dict[str, str] = {}


def _cases():
    for sm in (89, 90, 100, 120):
        for f in _sreg_forms(sm):
            name = f.operands[1].type
            gap = SM90_GAPS.get(name) if sm >= 90 else None
            yield pytest.param(f, sm, id=f"{name}-sm_{sm}",
                               marks=[pytest.mark.xfail(strict=True, reason=gap)] if gap else [])


@pytest.mark.parametrize("form, sm", _cases())
def test_special_register_matches_ptxas(form, sm):
    status, detail = check_form(form, sm=sm)
    assert status in ("match", "ran"), detail


def _kernel(body: str, arch: str = "sm_89", extra: str = "") -> str:
    return f""".version 8.6
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out)
{{
.reg .b64 %rd<8>;
.reg .b32 %r<16>;
.shared .align 4 .b8 stat[100];
{extra}
ld.param.u64 %rd1, [out];
mov.u32 %r9, %tid.x;
mul.wide.u32 %rd6, %r9, 32;
add.s64 %rd1, %rd1, %rd6;
{body}
ret;
}}
"""


def _both(ptx, arch="sm_89", words=8, threads=64, dynamic=0):
    theirs = oracle.ptxas(ptx, arch).output
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")
    outs = []
    for cubin, check in ((ours, True), (theirs, False)):
        out = np.zeros(threads * words, dtype=np.uint32)
        res = run(cubin, "k", (1, 1, 1), (threads, 1, 1), [out], hazard_check=check,
                  dynamic_shared_bytes=dynamic)
        assert not (check and res.hazards), [str(h) for h in res.hazards[:3]]
        outs.append(out.reshape(threads, words))
    return outs


def test_clock_and_timer_count_up_within_a_warp():
    body = """mov.u64 %rd2, %clock64;
mov.u32 %r1, %clock;
mov.u64 %rd3, %globaltimer;
mul.lo.u32 %r2, %r1, %r1;
mul.lo.u32 %r2, %r2, %r1;
mov.u64 %rd4, %clock64;
mov.u64 %rd5, %globaltimer;
st.global.u64 [%rd1], %rd2;
st.global.u64 [%rd1+8], %rd4;
st.global.u64 [%rd1+16], %rd3;
st.global.u64 [%rd1+24], %rd5;"""
    for out in _both(_kernel(body)):
        v = out.view(np.uint64).reshape(-1, 4)
        assert (v[:, 1] > v[:, 0]).all() and (v[:, 3] > v[:, 2]).all()
        assert (v[:, 0] > 0).all()


def test_shared_memory_sizes_and_driver_words():
    body = """mov.u32 %r1, %dynamic_smem_size;
mov.u32 %r2, %total_smem_size;
mov.u32 %r3, %nwarpid;
mov.u32 %r4, %nsmid;
st.global.u32 [%rd1], %r1;
st.global.u32 [%rd1+4], %r2;
st.global.u32 [%rd1+8], %r3;
st.global.u32 [%rd1+12], %r4;
st.shared.u32 [stat], %r1;"""
    ours, theirs = _both(_kernel(body), dynamic=256)
    assert (ours == theirs).all()
    assert (ours[:, 0] == 256).all()
    assert (ours[:, 1] == 256 + 100).all()
    assert (ours[:, 2] == 48).all()          # sm_89: 48 warps per SM


@pytest.mark.parametrize("arch,warps", [("sm_80", 64), ("sm_86", 48), ("sm_90", 64)])
def test_nwarpid_per_arch(arch, warps):
    body = "mov.u32 %r1, %nwarpid;\nst.global.u32 [%rd1], %r1;"
    ours, theirs = _both(_kernel(body, arch), arch)
    assert (ours == theirs).all() and (ours[:, 0] == warps).all()


@pytest.mark.parametrize("arch", ["sm_100", "sm_120"])
def test_per_cluster_size_driver_words(arch):
    """sm_100+ keep %dynamic_smem_size, %aggr_smem_size's limit, %envreg0..15 and
    %reserved_smem_offset_end/_1 once per cluster size: ptxas reads c[0x0][R+offset] with R =
    SR_CgaSize * -0xa0 (were refused). %dynamic_smem_size is the launch's dynamic shared
    bytes (PTX ISA); the rest as ptxas's cubin reads them in the emulator."""
    regs = ["%dynamic_smem_size", "%aggr_smem_size", "%envreg0", "%envreg15", "%envreg16",
            "%envreg31", "%reserved_smem_offset_end", "%reserved_smem_offset_1"]
    body = "\n".join(f"mov.u32 %r{i + 1}, {r};\nst.global.u32 [%rd1+{4 * i}], %r{i + 1};"
                     for i, r in enumerate(regs)) + "\nst.shared.u32 [stat], %r1;"
    ptx = _kernel(body, arch).replace(".version 8.6", ".version 8.7")
    ours, theirs = _both(ptx, arch, dynamic=256)
    assert (ours == theirs).all()
    assert (ours[:, 0] == 256).all()
    ours_sass = oracle.cuobjdump_sass(codegen.compile_ptx(ptx, arch, "k.ptx"))
    theirs_sass = oracle.cuobjdump_sass(oracle.ptxas(ptx, arch).output)
    assert ours_sass.count("SR_CgaSize") == theirs_sass.count("SR_CgaSize") == 6
