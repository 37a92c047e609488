"""HMMA with FP32 accumulators as an H200 computes it (issue 16; GPU run 14, fuzz seed 9301524;
bf16: run 11, fuzz seed 9300879).

Our cubin of that fp8 `mma.m16n8k32` program (lowered, as ptxas lowers it on sm_90, to F2FP
unpacks, two chained HMMA.16816.F32 and an FADD of C) gave 14 of its 2944 output words
otherwise on the H200 than in the emulator, under every timing variant (runs 14-15); ptxas's
cubin reached the same words through a NaN. The words carry the HMMA chain's FP32 result
1-2 ulp below the exactly rounded sum: the tensor core truncates (emu/ops_mma.py
`_hmma_f32`). Run 11's 9300879 (bf16 `wmma.m16n16k16` with FP32 accumulators, ptxas's cubin)
differed from the emulator in 8 words: the same rule, and its sums past FP32's range are
infinite (truncation would give the largest finite value). The expected bytes are the H200's
(their sha256 prefixes are the run report's).
"""
import gzip
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

DATA = Path(__file__).resolve().parent / "gpu_regressions"
CASES = [("hmma_f32_s9301524", "ours", "run14"), ("hmma_f32_s9301524", "ptxas", "run14"),
         ("hmma_f32_bf16_s9300879", "ptxas", "run11")]


def _run(HERE: Path, which: str, run: str):
    from ptx2sass.emu.launch import Param, run_buffers
    from tools.gpu_check.prepare import load_program
    launch = json.loads((HERE / "launch.json").read_text())
    params = [Param(buffer=p["buffer"]) if "buffer" in p else Param(type="bytes", value=bytes.fromhex(p["bytes"]))
              for p in launch["params"]]
    buffers = {name: (size, gzip.decompress((HERE / f"init_{name}.bin.gz").read_bytes()))
               for name, size in launch["buffers"].items()}
    prog = load_program((HERE / f"{which}_{run}.cubin").read_bytes(), launch["kernel"])
    res = run_buffers(prog, launch["grid"], launch["block"], params, buffers, hazard_check=False)
    return launch, {name: bytes(res.buffers[name]) for name in ("out", "atom")}


@pytest.mark.parametrize("case,which,run", CASES, ids=[f"{c}-{w}" for c, w, _ in CASES])
def test_emulator_matches_h200(case, which, run):
    HERE = DATA / case
    launch, got = _run(HERE, which, run)
    h200 = gzip.decompress((HERE / f"h200_{which}.gz").read_bytes())
    size = launch["buffers"]["out"]
    want = {"out": h200[:size], "atom": h200[size:]}
    for name, digest in launch["h200_sha256"][which].items():
        assert hashlib.sha256(want[name]).hexdigest().startswith(digest)
    for name in ("out", "atom"):
        g, w = np.frombuffer(got[name], np.uint64), np.frombuffer(want[name], np.uint64)
        bad = np.flatnonzero(g != w)
        assert not len(bad), f"{which} {name}: {len(bad)} words differ from the H200, first [{bad[0]}] " \
                             f"{int(g[bad[0]]):#x} != {int(w[bad[0]]):#x}"
