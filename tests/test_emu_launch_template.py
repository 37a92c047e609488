"""What a launch keeps from the launches before it (emu/launch.py): the shape's checked facts
per program and shape, the constant banks shared with the last launch whose bank 0 was the
same (with the words already read), and buffers made from bytes in one copy. Each launch
must still see exactly its own grid, block, parameters and buffers."""
import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.emu import EmuFault, loader, run
from ptx2sass.emu.launch import Launch
from ptx2sass.emu.memory import ConstantBanks, GlobalMemory
from tools.emu_testing import cubin_listing_decoder

PARAM_ECHO = r"""
.version 7.8
.target sm_89
.address_size 64
.visible .entry echo(.param .u64 out, .param .u32 x, .param .u64 y)
{
  .reg .b32 %r<4>;
  .reg .b64 %a<3>;
  ld.param.u64 %a0, [out];
  cvta.to.global.u64 %a0, %a0;
  ld.param.u32 %r0, [x];
  ld.param.u64 %a1, [y];
  mov.u32 %r1, %ntid.x;
  mov.b64 {%r2, %r3}, %a1;
  st.global.v4.u32 [%a0], {%r0, %r1, %r2, %r3};
  ret;
}
"""


@pytest.fixture(scope="module")
def echo():
    build = oracle.ptxas(PARAM_ECHO, "sm_89", name="echo.ptx")
    assert build.ok, build.stderr
    return build.output, loader.load_program(build.output, "echo", cubin_listing_decoder(build.output))


def test_repeated_launches_each_see_their_own_parameters(echo):
    """The same kernel launched with parameters that change, change back and repeat: a
    launch whose bank 0 equals the last one's shares its constant banks, any other makes
    its own; each output is that launch's parameters (so a shared bank read stale words,
    or a bank kept for different parameters, fails here)."""
    cubin, program = echo
    cases = [(7, 0x1_0000_0002), (9, 0x1_0000_0002), (7, 0x1_0000_0002), (7, 0x1_0000_0002),
             (7, 0xFFFF_FFFF_0000_0001), (7, 0x1_0000_0002)]
    seen = []
    for x, y in cases:
        out = np.zeros(4, np.uint32)
        run(cubin, "echo", 1, 1, [out, np.uint32(x), np.uint64(y)], program=program, hazard_check=False)
        assert out.tolist() == [x, 1, y & 0xFFFFFFFF, y >> 32]
        seen.append(out)
    # each launch wrote its own buffer (the same device address in every launch)
    assert [s[0] for s in seen] == [x for x, _ in cases]


def test_shapes_kept_per_program_still_checked(echo):
    """A shape's facts are kept once checked; a bad shape after good ones still faults, and
    a launch in another shape sees its own block size."""
    cubin, program = echo
    for block in (1, 32, 1, 64):
        out = np.zeros(4, np.uint32)
        run(cubin, "echo", 1, block, [out, np.uint32(3), np.uint64(5)], program=program, hazard_check=False)
        assert out.tolist() == [3, block, 5, 0]
    with pytest.raises(EmuFault, match="more than 1024 threads"):
        Launch(program, 1, 1025)
    with pytest.raises(EmuFault, match="exceed"):
        Launch(program, 1, 32, dynamic_shared_bytes=300 * 1024)
    with pytest.raises(EmuFault, match="reconverge must be one of"):
        Launch(program, 1, 32, reconverge="sometimes")
    with pytest.raises(EmuFault, match="launch dimensions must be positive"):
        Launch(program, (0, 1, 1), 32)
    Launch(program, [2, 1, 1], [32, 1, 1])       # lists are shapes too


def test_constant_words_read_once_by_bank_offset_and_size():
    """ConstantBanks.read keeps its answers: by bank, offset and size (a 4-byte and an
    8-byte read at one offset differ), and a read past the bank faults however many reads
    of the same offset came before."""
    raw0 = bytes(range(32))
    raw3 = bytes(range(100, 132))
    banks = ConstantBanks({0: raw0, 3: raw3})
    for _ in range(2):
        for bank, raw in ((0, raw0), (3, raw3)):
            for offset, size in ((0, 4), (0, 8), (0, 2), (4, 4), (24, 8), (28, 4), (31, 1)):
                want = int.from_bytes(raw[offset:offset + size], "little")
                assert banks.read(bank, offset, size) == want
    with pytest.raises(EmuFault, match="outside the bank"):
        banks.read(0, 28, 8)
    with pytest.raises(EmuFault, match="outside the bank"):
        banks.read(1, 0, 4)
    with pytest.raises(EmuFault, match="outside the bank"):
        banks.read(0, -4, 4)


@pytest.mark.parametrize("size, contents", [(10, bytes(range(1, 11))), (10, bytes(range(1, 5))),
                                             (5, bytes(range(1, 20))), (16, bytes(range(1, 17))),
                                             (0, b""), (3, bytearray(b"\x07\x08")),
                                             (6, np.arange(1, 4, dtype=np.uint16))])
def test_allocated_buffers_hold_their_bytes(size, contents):
    """A buffer holds its initial bytes (cut to its size, zeros after), in a writable backing
    padded to 16 bytes with zeros, whatever the contents' type."""
    mem = GlobalMemory()
    raw = contents.tobytes() if isinstance(contents, np.ndarray) else bytes(contents)
    buf = mem.allocate("b", size, contents)
    want = (raw[:size] + bytes(size))[:size]
    assert buf.data.tobytes() == want
    assert len(buf.backing) == -(-size // 16) * 16
    assert not buf.backing[size:].any()
    buf.data[:] = 0xAB
    assert buf.data.tobytes() == b"\xab" * size
    if isinstance(contents, bytes):
        assert raw == bytes(contents)            # the caller's bytes untouched
