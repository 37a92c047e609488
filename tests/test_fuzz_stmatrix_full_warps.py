"""Programs of the fuzzer's stmatrix group (stmatrix / movmatrix, `.sync.aligned`) launch
whole warps: in a CTA whose last warp is partial they are undefined, and the H200 stored
nothing there where the emulator stored (GPU run 25, seeds 9500363 and 9500094: CTAs of 17
and 33 threads)."""
from ptx2sass.fuzz.campaign import Options, make_program


def test_stmatrix_programs_launch_whole_warps():
    seen = 0
    for seed in range(9_500_000, 9_500_150):
        program = make_program(seed, Options(arch="sm_90", exclude=["texture"]))
        if "stmatrix" not in program.features:
            continue
        assert program.threads_per_block % 32 == 0, (seed, program.block)
        seen += 1
    assert seen >= 5
