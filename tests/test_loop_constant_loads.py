"""Constant-bank values a loop reads are loaded before the loop, not on every iteration
(isel/target_forms.py `_hoist_constant_loads`; docs/STATUS.md, branch quality35b).

On sm_90+ (`Target.alu_constants` false) an ALU instruction cannot read `c[0x0][..]` in
place: target_forms loads the constant with LDC/ULDC first. Loaded in the block of its
reader, a grid-stride loop paid one LDC per parameter per iteration (and crypto_rounds
keccak_f1600's rotate amounts 25 ULDCs a round, SM model 1.99x ptxas); ptxas loads them in
front of the loop. The loop body is read off nvdisasm's listing (a backward branch and its
label); ptxas's own listing is the expectation."""
import re

import numpy as np
import pytest

import ptx2sass
from ptx2sass import oracle
from ptx2sass.emu.launch import run

GRID_STRIDE = """
.version 8.8
.target sm_90
.address_size 64
.visible .entry gs(.param .u64 out, .param .u64 in, .param .u32 n, .param .f32 a, .param .f32 b)
{
    .reg .pred %p<3>;
    .reg .f32 %f<5>;
    .reg .b32 %r<11>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd3, [out];
    ld.param.u64 %rd4, [in];
    ld.param.u32 %r6, [n];
    ld.param.f32 %f1, [a];
    ld.param.f32 %f2, [b];
    mov.u32 %r1, %ntid.x;
    mov.u32 %r7, %ctaid.x;
    mov.u32 %r8, %tid.x;
    mad.lo.s32 %r10, %r7, %r1, %r8;
    setp.ge.s32 %p1, %r10, %r6;
    @%p1 bra DONE;
    mov.u32 %r9, %nctaid.x;
    mul.lo.s32 %r3, %r1, %r9;
    cvta.to.global.u64 %rd1, %rd4;
    cvta.to.global.u64 %rd2, %rd3;
LOOP:
    mul.wide.s32 %rd5, %r10, 4;
    add.s64 %rd6, %rd1, %rd5;
    ld.global.f32 %f3, [%rd6];
    fma.rn.f32 %f4, %f3, %f1, %f2;
    add.s64 %rd7, %rd2, %rd5;
    st.global.f32 [%rd7], %f4;
    add.s32 %r10, %r10, %r3;
    setp.lt.s32 %p2, %r10, %r6;
    @%p2 bra LOOP;
DONE:
    ret;
}
"""

_LINE = re.compile(r"/\*([0-9a-f]{4})\*/\s+(.*?)\s*;")
_LABEL = re.compile(r"^(\.L_x_\d+):")


def loop_bodies(cubin: bytes) -> list[list[str]]:
    """The instructions (text) of each loop of the listing: from a backward branch's label
    to the branch."""
    return loop_bodies_of_text(oracle.nvdisasm(cubin))


def loop_bodies_of_text(listing: str) -> list[list[str]]:
    labels, code, pending = {}, [], []
    for line in listing.splitlines():
        m = _LABEL.match(line.strip())
        if m:
            pending.append(m.group(1))
            continue
        m = _LINE.search(line)
        if m:
            for name in pending:
                labels[name] = len(code)
            pending = []
            code.append(m.group(2))
    bodies = []
    for i, text in enumerate(code):
        m = re.search(r"BRA `\((\.L_x_\d+)\)", text)
        if m and labels.get(m.group(1), i) < i:          # (not the closing self-branch)
            bodies.append(code[labels[m.group(1)]:i + 1])
    return bodies


def constant_loads(body: list[str]) -> list[str]:
    return [t for t in body if re.search(r"\b(LDC|ULDC|LDCU)(\.\w+)*\s", t)]


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_grid_stride_loop_loads_its_parameters_before_it(arch):
    src = GRID_STRIDE.replace(".target sm_90", f".target {arch}")
    theirs = oracle.ptxas(src, arch)
    assert theirs.ok, theirs.stderr
    (their_loop,) = loop_bodies(theirs.output)
    assert constant_loads(their_loop) == []          # the oracle: nothing loaded in the loop
    ours = ptx2sass.compile(src, arch, "gs.ptx")
    (our_loop,) = loop_bodies(ours)
    assert constant_loads(our_loop) == [], our_loop


def test_grid_stride_loop_runs():
    """Our sm_90 cubin gives ptxas's results (a grid of 2 x 64 lanes over 1000 elements:
    several trips, lanes leaving the loop apart), without hazards."""
    theirs = oracle.ptxas(GRID_STRIDE, "sm_90").output
    ours = ptx2sass.compile(GRID_STRIDE, "sm_90", "gs.ptx")
    rng = np.random.default_rng(35)
    x = rng.standard_normal(1000).astype(np.float32)
    outs = []
    for cubin in (ours, theirs):
        out = np.zeros(1024, np.float32)
        res = run(cubin, "gs", (2, 1, 1), (64, 1, 1),
                  [out, x.copy(), np.uint32(1000), np.float32(1.5), np.float32(-0.25)])
        assert not res.hazards, [str(h) for h in res.hazards[:3]]
        outs.append(out)
    assert np.array_equal(outs[0], outs[1])
    assert np.allclose(outs[0][:1000], 1.5 * x.astype(np.float64) - 0.25, rtol=1e-6, atol=1e-6)


# --- spilled loop values keep one slot across the back edge (regalloc/spill.py `shared_slots`)

def slot_copies(body: list[str]) -> list[tuple[str, str]]:
    """(LDL, STL) pairs of the loop moving a word from one stack slot to another: the
    register an `LDL Rx, [R1+a]` loads is next named by `STL [R1+b], Rx`, b != a."""
    found = []
    for i, text in enumerate(body):
        m = re.match(r"LDL\S*\s+(R\d+),\s*\[R1(\+0x[0-9a-f]+)?\]", text)
        if not m:
            continue
        reg, at = m.group(1), m.group(2) or ""
        for later in body[i + 1:]:
            if re.search(rf"\b{reg}\b", later):
                s = re.match(rf"STL\S*\s+\[R1(\+0x[0-9a-f]+)?\],\s*{reg}$", later)
                if s and (s.group(1) or "") != at:
                    found.append((text, later))
                break
    return found


def test_spilled_accumulators_stay_in_their_slots():
    """realworld register_pressure many_accumulators on sm_90: 40 accumulators carried
    round a loop in 32 registers (`__launch_bounds__(1024, 2)`). Each spilled accumulator
    and the value its phi copy takes at the back edge do not interfere, so they share a
    slot: before, 26 of the copies were an LDL from one slot and an STL to another, every
    iteration (SM model 2.23x ptxas's cycles). ptxas's loop has no such copy either."""
    from pathlib import Path
    path = Path(__file__).parent / "corpus/realworld/cuda/register_pressure.sm_90.ptx"
    src = path.read_text()
    theirs = oracle.ptxas(src, "sm_90")
    ours = ptx2sass.compile(src, "sm_90", path.name)

    def loop_of(cubin):
        text = oracle.nvdisasm(cubin)
        start = text.index(".text.many_accumulators:")
        end = text.find("\n\t.section", start + 1)
        return loop_bodies_of_text(text[start:end if end > 0 else None])
    (their_loop,) = loop_of(theirs.output)
    assert slot_copies(their_loop) == []
    (our_loop,) = loop_of(ours)
    assert slot_copies(our_loop) == [], slot_copies(our_loop)[:4]
    rng = np.random.default_rng(7)
    x = rng.standard_normal(4096).astype(np.float32)
    outs = []
    for cubin in (ours, theirs.output):
        out = np.zeros(128, np.float32)
        res = run(cubin, "many_accumulators", (1, 1, 1), (128, 1, 1), [x.copy(), out])
        assert not res.hazards, [str(h) for h in res.hazards[:3]]
        outs.append(out)
    assert np.array_equal(outs[0], outs[1])
