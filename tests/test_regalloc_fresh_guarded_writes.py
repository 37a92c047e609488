"""A guarded write of a general register that no path has written before kills it
(`regalloc/liveness.fresh_writes`), as a predicate's did already. A guarded `suld.v4` into
destinations that are not one quad is selected into a fresh quad under the guard, then
guarded moves; counted as a use, that quad's old (undefined) value was live from the
function's entry. In an unrolled 12-trip loop (fuzz seed 28001610, sm_100: 132 registers,
ptxas 40) every copy held its own four registers from the entry: 62 registers here, ptxas 18.
Ours and ptxas's cubins run on the same surface: outputs equal, registers near ptxas's."""
from __future__ import annotations

import numpy as np

from ptx2sass.emu.loader import load_program
from tests.test_emu_texture import SURF_KERNEL, THREADS, Surface, cubins
from ptx2sass.emu.launch import run

LOOP = """.reg .pred %p<3>;
and.b32 %r20, %r19, 1;
setp.ne.u32 %p1, %r20, 0;
mov.u32 %r10, %r5;
mov.u32 %r11, %r6;
mov.u32 %r12, %r7;
mov.u32 %r13, %r8;
mov.u32 %r21, 0;
$L:
@%p1 suld.b.1d.v4.b32.trap {%r13, %r10, %r12, %r11}, [%rd9, {%r1}];
add.u32 %r11, %r11, %r13;
xor.b32 %r12, %r12, %r10;
add.u32 %r21, %r21, 1;
setp.lt.u32 %p2, %r21, 12;
@%p2 bra $L;
st.global.v4.u32 [%rd8], {%r10, %r11, %r12, %r13};"""


def test_guarded_vector_surface_load_in_unrolled_loop():
    ptx = SURF_KERNEL.format(decl="", line=LOOP)
    rng = np.random.default_rng(28001610)
    raw = rng.integers(0, 256, size=256, dtype=np.uint8)
    inp = np.zeros((THREADS, 8), np.uint32)
    inp[:, 0] = rng.integers(0, 16, THREADS) * 16                 # x in bytes, in range
    inp[:, 4:] = rng.integers(0, 1 << 32, (THREADS, 4), dtype=np.uint64).astype(np.uint32)
    outs, regs = {}, {}
    for name, cubin in cubins(ptx).items():
        res = np.zeros((THREADS, 4), np.uint32)
        r = run(cubin, "k", 1, THREADS, [res, inp.copy(), Surface(raw.copy(), "1d")],
                hazard_check=name == "ours")
        assert not r.hazards, [str(h) for h in r.hazards[:3]]
        outs[name], regs[name] = res, load_program(cubin, "k").regcount
    np.testing.assert_array_equal(outs["ours"], outs["ptxas"])
    assert regs["ours"] <= regs["ptxas"] + 2, regs
