"""Small tinygrad programs for the backend tests: each takes a device name and returns a
NumPy array; the SASSEMU result is compared with tinygrad's CPU device (C through clang,
independent of PTX, ptx2sass and the emulator)."""
from __future__ import annotations

import os
import shutil
import stat
import sys
import tempfile

import numpy as np

RNG_SEED = 1234
# How a program's result is held to the reference device's: integers and booleans exactly,
# floats within (rtol, atol) of their type.
TOLERANCE = {np.float16: (1e-2, 1e-2), np.float32: (1e-4, 1e-5), np.float64: (1e-9, 1e-12)}


def same(ours: np.ndarray, ref: np.ndarray) -> bool:
    if ours.shape != ref.shape or ours.dtype != ref.dtype:
        return False
    if ours.dtype.kind in "iub":
        return np.array_equal(ours, ref)
    rtol, atol = TOLERANCE[ours.dtype.type]
    return np.allclose(ours, ref, rtol=rtol, atol=atol, equal_nan=True)


def clang_launcher() -> str | None:
    """A `CC` for tinygrad's CPU device (the reference) where the machine has no clang: a
    launcher for tests/zig_as_clang.py, which drives the clang inside PyPI's `ziglang`. None
    when CC is set or a clang is on PATH. tinygrad reads CC once per process: set it before
    the first CPU program runs."""
    if os.environ.get("CC") or shutil.which("clang"):
        return None
    launcher = os.path.join(tempfile.mkdtemp(prefix="ptx2sass-cc-"), "clang")
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "zig_as_clang.py")
    with open(launcher, "w") as f:
        f.write(f'#!/bin/sh\nexec "{sys.executable}" "{script}" "$@"\n')
    os.chmod(launcher, os.stat(launcher).st_mode | stat.S_IEXEC)
    return launcher


def on(device: str):
    """Run tinygrad code on `device` (tinygrad 0.14 picks the device from its DEV context)."""
    from tinygrad.helpers import Context
    return Context(DEV=device)


def _data(shape, dtype, lo=-3, hi=3, seed=0):
    rng = np.random.default_rng(RNG_SEED + seed)
    if np.dtype(dtype).kind in "iu":
        # narrow integers stay small so that no result overflows: tinygrad's PTX computes
        # int8/uint8 in 16-bit registers without wrapping (a tinygrad difference, not ours)
        bound = 6 if np.dtype(dtype).itemsize == 1 else 50
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -bound), min(info.max, bound), size=shape).astype(dtype)
    if np.dtype(dtype) == np.bool_:
        return rng.random(shape) < 0.5
    return rng.uniform(lo, hi, size=shape).astype(dtype)


def elementwise(dtype):
    def program(device):
        from tinygrad import Tensor
        a = Tensor(_data((4, 33), dtype, seed=1))
        b = Tensor(_data((4, 33), dtype, seed=2))
        if np.dtype(dtype) == np.bool_:
            return ((a & b) | (a ^ b).logical_not()).numpy()
        out = a * b + a - b
        if np.dtype(dtype).kind == "f":
            out = out.maximum(a) / (b.abs() + 1)
        else:
            out = out.maximum(a) + (a < b).where(a, b)
        return out.numpy()
    return program


def reductions(device):
    from tinygrad import Tensor
    a = Tensor(_data((6, 40), np.float32, seed=3))
    return np.concatenate([a.sum(axis=1).numpy(), a.max(axis=0).numpy(), a.mean().reshape(1).numpy()])


def int_reductions(device):
    from tinygrad import Tensor
    a = Tensor(_data((5, 37), np.int32, seed=4))
    return np.concatenate([a.sum(axis=1).numpy(), a.max(axis=1).numpy(), a.min(axis=0).numpy()])


def matmul(dtype):
    def program(device):
        from tinygrad import Tensor
        a = Tensor(_data((8, 16), dtype, -1, 1, seed=5))
        b = Tensor(_data((16, 12), dtype, -1, 1, seed=6))
        return (a @ b).numpy()
    return program


def matmul_tensor_cores(device):
    """half inputs, float accumulation, tile-sized: tinygrad emits mma.sync (HMMA)."""
    from tinygrad import Tensor, dtypes
    a = Tensor(_data((32, 32), np.float16, -1, 1, seed=22))
    b = Tensor(_data((32, 32), np.float16, -1, 1, seed=23))
    return a.matmul(b, dtype=dtypes.float).numpy()


def conv2d(device):
    from tinygrad import Tensor
    x = Tensor(_data((1, 2, 6, 6), np.float32, seed=7))
    w = Tensor(_data((3, 2, 3, 3), np.float32, seed=8))
    return x.conv2d(w, padding=1).numpy()


def softmax(device):
    from tinygrad import Tensor
    return Tensor(_data((4, 24), np.float32, seed=9)).softmax(axis=-1).numpy()


def layernorm(device):
    from tinygrad import Tensor
    return Tensor(_data((4, 24), np.float32, seed=10)).layernorm().numpy()


def transcendental(device):
    from tinygrad import Tensor
    a = Tensor(_data((64,), np.float32, 0.1, 4, seed=11))
    return np.concatenate([a.exp().numpy(), a.log().numpy(), a.sin().numpy(), a.sqrt().numpy(),
                           a.tanh().numpy(), a.sigmoid().numpy(), (1 / a).numpy()])


def arange_cumsum_gather(device):
    from tinygrad import Tensor
    # Tensor.arange has no device of its own: tie it to one that has
    r = (Tensor(np.zeros(40, np.int32)) + Tensor.arange(40)).reshape(5, 8)
    c = Tensor(_data((20,), np.float32, seed=12)).cumsum()
    idx = Tensor(np.array([3, 0, 7, 7, 1], dtype=np.int32))
    g = Tensor(_data((8, 3), np.float32, seed=13))[idx]
    return np.concatenate([r.numpy().ravel().astype(np.float32), c.numpy(), g.numpy().ravel()])


def int64_float64(device):
    from tinygrad import Tensor
    a = Tensor(_data((32,), np.int64, seed=14))
    b = Tensor(_data((32,), np.float64, seed=15))
    ints = (a * 1000003 + (a << 33) - 7).numpy()
    floats = (b * b - b / 3 + b.maximum(1.5)).numpy()   # no f64 transcendentals: tinygrad
    # writes ex2/lg2/sin.approx.f64, which PTX does not have (ptxas refuses them too)
    return np.concatenate([ints.astype(np.float64), floats])


def mlp_forward_backward(device):
    from tinygrad import Tensor
    x = Tensor(_data((4, 8), np.float32, seed=16))
    w1 = Tensor(_data((8, 16), np.float32, -0.5, 0.5, seed=17), device=device)
    w2 = Tensor(_data((16, 3), np.float32, -0.5, 0.5, seed=18), device=device)
    loss = (x @ w1).relu().matmul(w2).log_softmax(axis=-1).mean()
    loss.backward()
    return np.concatenate([loss.reshape(1).numpy(), w1.grad.numpy().ravel(), w2.grad.numpy().ravel()])


def cnn_forward(device):
    from tinygrad import Tensor
    x = Tensor(_data((1, 1, 8, 8), np.float32, seed=19))
    w1 = Tensor(_data((2, 1, 3, 3), np.float32, -0.5, 0.5, seed=20))
    w2 = Tensor(_data((18, 4), np.float32, -0.5, 0.5, seed=21))
    h = x.conv2d(w1).relu().max_pool2d((2, 2))
    return (h.reshape(1, -1) @ w2).numpy()


def _on_device(program):
    def run(device):
        with on(device):
            return program(device)
    run.__name__ = program.__name__
    return run


PROGRAMS = {
    **{f"elementwise_{np.dtype(t).name}": elementwise(t)
       for t in (np.float32, np.float16, np.int32, np.int8, np.uint8, np.int64, np.float64,
                 np.bool_)},
    "reductions": reductions,
    "int_reductions": int_reductions,
    "matmul_float32": matmul(np.float32),
    "matmul_float16": matmul(np.float16),
    "matmul_tensor_cores": matmul_tensor_cores,
    "conv2d": conv2d,
    "softmax": softmax,
    "layernorm": layernorm,
    "transcendental": transcendental,
    "arange_cumsum_gather": arange_cumsum_gather,
    "int64_float64": int64_float64,
    "mlp_forward_backward": mlp_forward_backward,
    "cnn_forward": cnn_forward,
}
PROGRAMS = {name: _on_device(p) for name, p in PROGRAMS.items()}
