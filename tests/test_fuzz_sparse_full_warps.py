"""Programs of the fuzzer's sparse group (mma.sp, `.sync.aligned`) launch whole warps: in a
CTA whose last warp is partial mma.sp is undefined, and the H200 left D's registers as they
were (GPU run 27, seeds 9500435, 9500547 and 9500692: CTAs of 17 threads), which the
emulator now does too; those registers hold whatever each compiler had put there, so such
a launch would compare two undefined values."""
from ptx2sass.fuzz.campaign import Options, make_program


def test_sparse_programs_launch_whole_warps():
    seen = 0
    for seed in range(9_500_400, 9_500_800):
        program = make_program(seed, Options(arch="sm_90", exclude=["texture"]))
        if "sparse" not in program.features:
            continue
        assert program.threads_per_block % 32 == 0, (seed, program.block)
        seen += 1
    assert seen >= 5
