"""The real-world corpus's texture module (tests/corpus/realworld/cuda/textures.sm_90.ptx,
nvcc's PTX of src/textures.cu) on sm_100 and sm_120: `.target` rewritten, compiled by ptxas
and by us, each kernel run in the emulator on the same bound objects, ours = ptxas's cubin's
output (and a NumPy model where the kernel is exact: tex1Dfetch * 2, the byte inversion),
no hazard in either cubin. This module was held out of the texture seeds of branch arch10 (the
blackwell TEX.LL/SUST forms were probed from tools/isa_seeds/ only; sha256 of the file cc7569c8...)."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.emu.textures import Surface, Texture

PTX = Path(__file__).parent / "corpus/realworld/cuda/textures.sm_90.ptx"
W, H = 40, 3


def _cubins(arch: str) -> dict[str, bytes]:
    ptx = re.sub(r"\.target sm_90\b", f".target {arch}", PTX.read_text())
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    return {"ptxas": theirs.output, "ours": codegen.compile_ptx(ptx, arch)}


def _launch(cubin, kernel, grid, block, params):
    r = run(cubin, kernel, grid, block, params)
    assert not r.hazards, [str(h) for h in r.hazards[:3]]


@pytest.mark.parametrize("arch", ["sm_100", "sm_120"])
def test_realworld_texture_kernels(arch):
    rng = np.random.default_rng(7)
    got = {}
    for name, cubin in _cubins(arch).items():
        out = {}
        # tex1Dfetch of a float texture: out[i] = 2 * texel i (x channel)
        data1 = rng.integers(0, 256, size=(64, 4)).astype(np.float32) if name == "ptxas" else got["ptxas"]["data1"]
        o1 = np.zeros(64, np.float32)
        _launch(cubin, "tex1d_fetch", 2, 32, [Texture(data1.copy(), "1d"), o1, np.int32(50)])
        # tex2D with bilinear filtering at (x + 0.5, y + 0.25)
        data2 = rng.integers(0, 256, size=(H, W, 4)).astype(np.float32) if name == "ptxas" else got["ptxas"]["data2"]
        o2 = np.zeros(W * H, np.float32)
        _launch(cubin, "tex2d_bilinear", (2, H), 32, [Texture(data2.copy(), "2d", filter="linear"), o2,
                                                      np.int32(W), np.int32(H)])
        # surf2Dread/surf2Dwrite of uchar4: 255 - x, y, z; w kept
        data3 = rng.integers(0, 2**32, size=(H, W), dtype=np.uint64).astype(np.uint32) \
            if name == "ptxas" else got["ptxas"]["data3"]
        s = Surface(data3.copy(), "2d")
        _launch(cubin, "surf2d_invert", (2, H), 32, [s, np.int32(W), np.int32(H)])
        got[name] = {"data1": data1, "data2": data2, "data3": data3, "o1": o1, "o2": o2, "s": s.data}
    theirs, ours = got["ptxas"], got["ours"]
    want1 = np.zeros(64, np.float32)
    want1[:50] = theirs["data1"][:50, 0] * 2
    assert (theirs["o1"] == want1).all()
    b = theirs["data3"].view(np.uint8).reshape(H, W, 4)
    want3 = np.concatenate([255 - b[..., :3], b[..., 3:]], axis=-1).reshape(H, W * 4).view(np.uint32)
    assert (theirs["s"] == want3).all()
    assert np.isfinite(theirs["o2"]).all() and theirs["o2"].any()
    for k in ("o1", "o2", "s"):
        assert (ours[k].view(np.uint32) == theirs[k].view(np.uint32)).all(), k
