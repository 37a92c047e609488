"""The deferred latency order (sched/pre_schedule.py `DEFER_WINDOW`, branch regs32): an
instruction that adds registers waits until it is near its latest start.

An unrolled message schedule in the shape of SHA-1/SHA-256's, written for this test: 16
words loaded, 48 more each mixed from four earlier ones (`w[i] = w[i-16] + s0(w[i-15]) +
w[i-7] + s1(w[i-2])`), all written before 64 rounds of a 5-word state that each read one
word (NVVM's order for such a loop). Every word is ready long before its round, so the
latency order filled the round chain's stalls with them and they lived for many rounds
(crypto_rounds sha256_block: 56 registers, ptxas 38). Expected values are ptxas's: its
register count and its cubin's outputs in the emulator."""
from __future__ import annotations

import numpy as np

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run as emu_run
from ptx2sass.encoder.cubin import read_cubin

ROUNDS = 64


def _schedule_ptx(rounds: int = ROUNDS) -> str:
    lines = [".version 8.5", ".target sm_89", ".address_size 64", "",
             ".visible .entry rounds(.param .u64 in, .param .u64 out)", "{",
             "    .reg .b32 %w<80>;", "    .reg .b32 %t<1200>;", "    .reg .b32 %s<8>;",
             "    .reg .b64 %rd<8>;",
             "    ld.param.u64 %rd1, [in];", "    ld.param.u64 %rd2, [out];",
             "    cvta.to.global.u64 %rd1, %rd1;", "    cvta.to.global.u64 %rd2, %rd2;",
             "    mov.u32 %t0, %tid.x;", "    mul.wide.u32 %rd3, %t0, 64;", "    add.s64 %rd4, %rd1, %rd3;",
             "    mul.wide.u32 %rd5, %t0, 20;", "    add.s64 %rd6, %rd2, %rd5;"]
    lines += [f"    ld.global.u32 %w{i}, [%rd4+{4 * i}];" for i in range(16)]
    t = 1

    def tmp() -> str:
        nonlocal t
        t += 1
        return f"%t{t}"
    for i in range(16, rounds):
        a, b, c, d = tmp(), tmp(), tmp(), tmp()
        e, f, g, h = tmp(), tmp(), tmp(), tmp()
        lines += [f"    shf.r.wrap.b32 {a}, %w{i - 15}, %w{i - 15}, 7;", f"    shr.u32 {b}, %w{i - 15}, 3;",
                  f"    xor.b32 {c}, {a}, {b};",
                  f"    shf.r.wrap.b32 {d}, %w{i - 2}, %w{i - 2}, 17;", f"    shr.u32 {e}, %w{i - 2}, 10;",
                  f"    xor.b32 {f}, {d}, {e};",
                  f"    add.s32 {g}, %w{i - 16}, {c};", f"    add.s32 {h}, {g}, %w{i - 7};",
                  f"    add.s32 %w{i}, {h}, {f};"]
    state = [f"%s{k}" for k in range(5)]
    for k, v in enumerate((0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0)):
        lines.append(f"    mov.u32 {state[k]}, {v};")
    sa, sb, sc, sd, se = state
    for i in range(rounds):
        r5, ch, nb, x1, x2, x3, rb, x4, x5 = (tmp() for _ in range(9))
        new = tmp()
        lines += [f"    shf.l.wrap.b32 {r5}, {sa}, {sa}, 5;",
                  f"    and.b32 {ch}, {sb}, {sc};", f"    not.b32 {nb}, {sb};", f"    and.b32 {nb}, {nb}, {sd};",
                  f"    or.b32 {ch}, {ch}, {nb};",
                  f"    add.s32 {x1}, {se}, {r5};", f"    add.s32 {x2}, {x1}, {ch};",
                  f"    add.s32 {x3}, {x2}, {(0x5A827999 + 0x1F3 * i) & 0xFFFFFFFF};",
                  f"    add.s32 {x4}, {x3}, %w{i};",
                  f"    shf.l.wrap.b32 {x5}, {x4}, {x4}, 7;", f"    xor.b32 {new}, {x5}, {x4};",
                  f"    shf.l.wrap.b32 {rb}, {sb}, {sb}, 30;"]
        sa, sb, sc, sd, se = new, sa, rb, sc, sd
    lines += [f"    st.global.u32 [%rd6+{4 * k}], {v};" for k, v in enumerate((sa, sb, sc, sd, se))]
    lines += ["    ret;", "}", ""]
    return "\n".join(lines)


def test_schedule_words_wait_for_their_round():
    ptx = _schedule_ptx()
    ours = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89", {})[0]
    got = oracle.ptxas(ptx, "sm_89")
    assert got.output is not None, got.stderr
    theirs = got.output
    mine, ptxas_regs = read_cubin(ours).kernels[0].regcount, read_cubin(theirs).kernels[0].regcount
    assert mine <= 1.10 * ptxas_regs, (mine, ptxas_regs)
    words = np.random.default_rng(11).integers(0, 1 << 32, 32 * 16, dtype=np.uint64).astype(np.uint32)
    outs = []
    for cubin, check in ((theirs, False), (ours, True)):
        out = np.zeros(32 * 5, dtype=np.uint32)
        result = emu_run(cubin, "rounds", (1, 1, 1), (32, 1, 1), [words.copy(), out], hazard_check=check)
        if check:
            assert result.hazards == []
        outs.append(out.tobytes())
    assert outs[0] == outs[1]
