"""VABSDIFF4 (`vabsdiff4` on sm_8x, isel/simd_video.py) is pure arithmetic for both
schedulers (sched/list_schedule.py PURE): before branch hoist32 it was a region boundary,
so no load after one could move above it and every row of an unrolled block SAD waited
for its own loads (real-world simd_video block_sad4x4: 612 single-warp cycles, ptxas 237,
which issues every load first).

The kernel, written for this test: eight rows, each two loads, a byte-shifted PRMT of the
reference pair and a `vabsdiff4 ... .add` into its own sum, the sums then added (NVVM's
order for such an unrolled loop keeps each row's loads next to its VABSDIFF4). Expected
values are ptxas's: its cubin's outputs and single-warp cycles in the emulator."""
from __future__ import annotations

import numpy as np

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run as emu_run

ROWS = 8


def _sad_ptx(rows: int = ROWS) -> str:
    lines = [".version 8.5", ".target sm_89", ".address_size 64", "",
             ".visible .entry sad(.param .u64 cur, .param .u64 ref, .param .u64 out)", "{",
             "    .reg .b32 %r<200>;", "    .reg .b64 %rd<12>;",
             "    ld.param.u64 %rd1, [cur];", "    ld.param.u64 %rd2, [ref];", "    ld.param.u64 %rd3, [out];",
             "    cvta.to.global.u64 %rd1, %rd1;", "    cvta.to.global.u64 %rd2, %rd2;",
             "    cvta.to.global.u64 %rd3, %rd3;",
             "    mov.u32 %r0, %tid.x;", "    mul.wide.u32 %rd4, %r0, 64;", "    add.s64 %rd5, %rd1, %rd4;",
             "    mul.wide.u32 %rd6, %r0, 72;", "    add.s64 %rd7, %rd2, %rd6;",
             "    mul.wide.u32 %rd8, %r0, 4;", "    add.s64 %rd9, %rd3, %rd8;"]
    sums = []
    for i in range(rows):
        c, a, b, p, s = (f"%r{10 + 5 * i + k}" for k in range(5))
        lines += [f"    ld.global.u32 {c}, [%rd5+{8 * i}];",
                  f"    ld.global.u32 {a}, [%rd7+{8 * i}];", f"    ld.global.u32 {b}, [%rd7+{8 * i + 4}];",
                  f"    prmt.b32 {p}, {a}, {b}, 0x4321;",
                  f"    mov.u32 {s}, 0;",
                  f"    vabsdiff4.u32.u32.u32.add {s}, {c}, {p}, {s};"]
        sums.append(s)
    acc = sums[0]
    for k, s in enumerate(sums[1:]):
        nxt = f"%r{100 + k}"
        lines.append(f"    add.s32 {nxt}, {acc}, {s};")
        acc = nxt
    lines += [f"    st.global.u32 [%rd9], {acc};", "    ret;", "}", ""]
    return "\n".join(lines)


def test_video_rows_issue_their_loads_first():
    ptx = _sad_ptx()
    ours = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89", {})[0]
    got = oracle.ptxas(ptx, "sm_89")
    assert got.output is not None, got.stderr
    rng = np.random.default_rng(5)
    cur = rng.integers(0, 1 << 32, 32 * 16, dtype=np.uint64).astype(np.uint32)
    ref = rng.integers(0, 1 << 32, 32 * 18, dtype=np.uint64).astype(np.uint32)
    outs, cycles = [], []
    for cubin, check in ((got.output, False), (ours, True)):
        out = np.zeros(32, dtype=np.uint32)
        result = emu_run(cubin, "sad", (1, 1, 1), (32, 1, 1), [cur.copy(), ref.copy(), out], hazard_check=True)
        if check:
            assert result.hazards == []
        outs.append(out.tobytes())
        cycles.append(result.cycles)
    assert outs[0] == outs[1]
    theirs, mine = cycles
    assert mine <= 1.25 * theirs, (mine, theirs)
