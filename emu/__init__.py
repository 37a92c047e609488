"""A SASS emulator that runs cubins on the CPU, checks their control codes and estimates
their cycles.

    from ptx2sass import emu
    result = emu.run(cubin, "add", grid=(4,), block=(128,), params=[a, b, np.uint32(n)])
    result.stats            # {"instructions": …, "cycles": …, "hazards": …}

NumPy arrays passed as parameters are copied into emulated global memory and back after
the run. Every fault (out-of-bounds access, unsupported instruction, budget, deadlock,
undecodable word) raises `EmuFault` with a one-line message naming kernel and offset.

`result.cycles` is the control-code checker's single-warp estimate; the SM-level model
(occupancy, pipes, caches, bank conflicts on a named GPU) is `emu.timing.estimate`.
"""
from .errors import EmuFault
from .launch import LaunchResult, Param, run
from .loader import load_program
from .program import KernelProgram

__all__ = ["EmuFault", "KernelProgram", "LaunchResult", "Param", "load_program", "run"]
