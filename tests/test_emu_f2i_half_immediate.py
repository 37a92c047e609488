"""F2I from an f16 immediate (`F2I.U64.F16.CEIL R4, 6.83203125`, ptxas's form of
`cvt.rpi.u64.f16` of a constant): the immediate's field holds the half's bits, so the
emulator converts the value the text spells. Campaign 10 seed 22005563: it read the low
half of the f32 bits of 6.83203125 (0xa000, a small negative half) and got 0."""
import numpy as np

from ptx2sass import oracle
from ptx2sass.emu.launch import run

CEIL_OF_HALF_CONSTANT = """.version 8.5
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out)
{
    .reg .b16 %h<1>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    mov.b16 %h0, 0x46d5;
    cvt.rpi.sat.u64.f16 %d1, %h0;
    st.global.u64 [%d0], %d1;
    ret;
}
"""


def test_f2i_reads_an_f16_immediate_as_the_half_it_spells():
    cubin = oracle.ptxas(CEIL_OF_HALF_CONSTANT).output
    assert "F2I.U64.F16.CEIL R" in oracle.cuobjdump_sass(cubin)     # the immediate form
    out = np.zeros(1, np.uint64)
    run(cubin, "k", (1,), (1,), [out])
    assert int(out[0]) == 7              # ceil(0x46d5 = 6.83203125), the manual's cvt.rpi
