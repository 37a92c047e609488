"""Harvest the LLVM PTX corpus: PTX that LLVM's NVPTX back end writes for sm_89, through the
Zig compiler of PyPI's `ziglang` (pinned in the test extra), with no NVIDIA tool involved.

    .venv/bin/python tools/harvest_llvm.py [--out tests/corpus/llvm]

The kernels are our own Zig sources in tools/llvm_kernels/ (gpu.zig holds what they share:
thread indices, the barrier as inline assembly, a panic namespace whose handlers call one
noinline `.noreturn` function). They cover what plain LLVM writes and the other producers
do not: `.func` calls with `.param` passing, recursion, local-memory stack frames indexed at
run time, jump tables (brx.idx), shared-memory reductions, atomics on global and shared
memory, vector loads, 8/16/64-bit integers, saturating arithmetic, bit counting, f16/f64,
integer division, unrolled loops, select chains, constant tables and by-value structs.

Each file is compiled by itself, in a scratch copy of the folder with a scratch cache, so the
PTX depends on neither the checkout's path nor earlier builds. Writes `<name>.ptx` per kernel
and `manifest.json`: the entry, the launch (grid, block), each parameter (buffers with their
dtype, element count, input recipe and access; scalars with their PTX type and value) and the
file's hash. Kernels ptxas refuses are kept with `ptxas_error` and left out of the runs. The
NumPy references live in tests/llvm_corpus.py, written from the kernels' meaning.
"""
from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SOURCES = REPO / "tools" / "llvm_kernels"
DEFAULT_OUT = REPO / "tests" / "corpus" / "llvm"
PINNED_ZIG = "0.17.1"
ARCH = "sm_89"


# Arrays: (name, dtype, count, init, access); init "rand" = uniform [-4, 4), "randn" =
# normal, "ints:A:B" = integers in [A, B), "nonzero:A:B" = the same without 0, "bits" =
# random bit patterns, "zeros". Scalars: (name, PTX type, value).
def _a(name, dtype, count, init="rand", access="in"):
    return {"name": name, "kind": "buffer", "dtype": dtype, "count": count, "init": init,
            "access": access}


def _s(name, ptype, value):
    return {"name": name, "kind": "scalar", "type": ptype, "value": value}


N = 96          # elements per element-wise kernel: three warps, the last one partial
G = [2, 1, 1]   # two blocks of 64 threads cover them
B = [64, 1, 1]

KERNELS = [
    dict(name="saxpy", grid=G, block=B,
         params=[_a("y", "float32", N, access="inout"), _a("x", "float32", N),
                 _s("a", "f32", 1.5), _s("n", "u32", N)]),
    dict(name="calls", grid=G, block=B,
         params=[_a("out", "uint32", N, "zeros", "out"), _a("fout", "float32", N, "zeros", "out"),
                 _a("x", "uint32", N, "bits"), _a("f", "float32", N), _s("n", "u32", N)]),
    dict(name="safe_checks", mode="ReleaseSafe", grid=G, block=B,
         params=[_a("out", "int32", N, "zeros", "out"), _a("x", "int32", N, "ints:-100000:100000"),
                 _a("idx", "uint32", N, f"ints:0:{N}"), _s("n", "u32", N)]),
    dict(name="local_sort", grid=[1, 1, 1], block=[48, 1, 1],
         params=[_a("out", "int32", 40 * 12, "zeros", "out"),
                 _a("hist", "uint32", 40 * 8, "zeros", "out"),
                 _a("x", "int32", 40 * 12, "ints:-50:50"), _s("n", "u32", 40)]),
    dict(name="switch_op", grid=G, block=B,
         params=[_a("out", "uint32", N, "zeros", "out"), _a("op", "uint32", N, "ints:0:14"),
                 _a("a", "uint32", N, "bits"), _a("b", "uint32", N, "ints:0:40"),
                 _s("n", "u32", N)]),
    dict(name="block_reduce", grid=[3, 1, 1], block=[128, 1, 1],
         params=[_a("sums", "float32", 3, "zeros", "out"), _a("maxes", "uint32", 3, "zeros", "out"),
                 _a("x", "float32", 300), _a("u", "uint32", 300, "bits"), _s("n", "u32", 300)]),
    dict(name="atomics", grid=[2, 1, 1], block=[128, 1, 1],
         params=[_a("hist", "uint32", 16, "zeros", "inout"),
                 _a("stats", "int32", 6, "stats", "inout"),
                 _a("fsum", "float32", 1, "zeros", "inout"), _a("prod", "uint32", 1, "ones", "inout"),
                 _a("x", "int32", 200, "ints:-5000:5000"), _s("n", "u32", 200)]),
    dict(name="vec4", grid=G, block=B,
         params=[_a("out", "float32", 4 * N, "zeros", "out"), _a("sums", "float32", N, "zeros", "out"),
                 _a("uout", "uint32", 4 * N, "zeros", "out"), _a("hout", "uint16", 8 * N, "zeros", "out"),
                 _a("a", "float32", 4 * N), _a("b", "float32", 4 * N), _a("u", "uint32", 4 * N, "bits"),
                 _a("h", "uint16", 8 * N, "bits"), _s("c", "f32", 0.75), _s("n", "u32", N)]),
    dict(name="int_narrow", grid=G, block=B,
         params=[_a("o8", "uint8", N, "zeros", "out"), _a("o16", "int16", N, "zeros", "out"),
                 _a("o32", "int32", N, "zeros", "out"), _a("a", "uint8", N, "bits"),
                 _a("b", "int8", N, "bits"), _a("c", "int16", N, "bits"), _a("d", "uint16", N, "bits"),
                 _s("n", "u32", N)]),
    dict(name="int64", grid=G, block=B,
         params=[_a("out", "uint64", N, "zeros", "out"), _a("sout", "int64", N, "zeros", "out"),
                 _a("a", "uint64", N, "bits"), _a("b", "uint64", N, "bits"), _s("n", "u32", N)]),
    dict(name="saturate", grid=G, block=B,
         params=[_a("o8", "uint8", N, "zeros", "out"), _a("o16", "int16", N, "zeros", "out"),
                 _a("o32", "int32", N, "zeros", "out"), _a("ou", "uint32", N, "zeros", "out"),
                 _a("a", "int32", N, "bits"), _a("b", "int32", N, "bits"), _s("n", "u32", N)]),
    dict(name="bits", grid=G, block=B,
         params=[_a("o32", "uint32", 3 * N, "zeros", "out"), _a("o64", "uint64", N, "zeros", "out"),
                 _a("o16", "uint16", N, "zeros", "out"), _a("a", "uint32", N, "bits"),
                 _a("b", "uint64", N, "bits"), _s("n", "u32", N)]),
    dict(name="half", grid=G, block=B,
         params=[_a("out", "float16", 2 * N, "zeros", "out"), _a("fout", "float32", N, "zeros", "out"),
                 _a("a", "float16", N), _a("b", "float16", N), _s("s", "f32", 0.375),
                 _s("n", "u32", N)]),
    dict(name="double", grid=G, block=B,
         params=[_a("out", "float64", 3 * N, "zeros", "out"), _a("iout", "int64", N, "zeros", "out"),
                 _a("fout", "float32", N, "zeros", "out"), _a("a", "float64", N, "randn"),
                 _a("b", "float64", N), _s("n", "u32", N)]),
    dict(name="rounding", grid=G, block=B,
         params=[_a("out", "float32", 5 * N, "zeros", "out"), _a("a", "float32", N),
                 _a("b", "float32", N), _s("n", "u32", N)]),
    dict(name="divide", grid=G, block=B,
         params=[_a("u", "uint32", 2 * N, "zeros", "out"), _a("s", "int32", 3 * N, "zeros", "out"),
                 _a("w", "uint64", N, "zeros", "out"), _a("a", "int32", N, "ints:-100000:100000"),
                 _a("b", "int32", N, "nonzero:-300:300"), _s("n", "u32", N)]),
    dict(name="unroll", grid=G, block=B,
         params=[_a("out", "float32", 2 * N, "zeros", "out"), _a("iout", "uint32", N, "zeros", "out"),
                 _a("x", "float32", N, "randn"), _a("w", "float32", 8, "randn"),
                 _a("u", "uint32", 16 * N, "bits"), _s("len", "u32", 13), _s("n", "u32", N)]),
    dict(name="select_chain", grid=G, block=B,
         params=[_a("out", "float32", N, "zeros", "out"), _a("iout", "int32", N, "zeros", "out"),
                 _a("x", "float32", N), _a("k", "int32", N, "ints:-200:200"), _s("n", "u32", N)]),
    dict(name="matmul_tiled", grid=[3, 2, 1], block=[8, 8, 1],
         params=[_a("c", "float32", 13 * 20, "zeros", "out"), _a("a", "float32", 13 * 11, "randn"),
                 _a("b", "float32", 11 * 20, "randn"), _s("m", "u32", 13), _s("nn", "u32", 20),
                 _s("kk", "u32", 11)]),
    dict(name="convert", grid=G, block=B,
         params=[_a("oi", "int32", 2 * N, "zeros", "out"), _a("of", "float32", 2 * N, "zeros", "out"),
                 _a("od", "float64", 2 * N, "zeros", "out"), _a("oh", "float16", 2 * N, "zeros", "out"),
                 _a("ob", "int8", N, "zeros", "out"), _a("x", "float32", N),
                 _a("k", "int32", N, "bits"), _a("w", "uint64", N, "bits"), _s("n", "u32", N)]),
    dict(name="warp_shfl", grid=[1, 1, 1], block=[64, 1, 1],
         params=[_a("out", "float32", 64, "zeros", "out"), _a("iout", "uint32", 64, "zeros", "out"),
                 _a("x", "float32", 64, "ints:-20:20"), _a("u", "uint32", 64, "bits")]),
    dict(name="recursion", grid=[1, 1, 1], block=[40, 1, 1],
         params=[_a("out", "uint32", 40, "zeros", "out"), _a("wout", "uint64", 40, "zeros", "out"),
                 _a("k", "uint32", 40, "bits"), _a("w", "uint64", 40, "bits"), _s("n", "u32", 40)]),
    dict(name="lookup", grid=[1, 1, 1], block=[48, 1, 1],
         params=[_a("crc", "uint32", 48, "zeros", "out"), _a("out", "float32", 48, "zeros", "out"),
                 _a("data", "uint8", 48 * 9, "bits"), _a("x", "float32", 48),
                 _s("p", "f32x2", [1.25, -0.5]), _s("len", "u32", 9), _s("n", "u32", 48)]),
]

# The same sources at other optimisation levels: Debug (LLVM at -O0 with Zig's safety
# checks: every value through the local stack frame, generic pointers from cvta.local, calls
# kept) and ReleaseSmall (calls and loops kept rolled).
VARIANTS = [("calls", "Debug"), ("switch_op", "Debug"), ("local_sort", "Debug"),
            ("int64", "Debug"), ("block_reduce", "Debug"), ("saturate", "Debug"),
            ("int_narrow", "Debug"), ("bits", "Debug"), ("divide", "Debug"),
            ("calls", "ReleaseSmall"), ("local_sort", "ReleaseSmall"), ("unroll", "ReleaseSmall")]
_SUFFIX = {"Debug": "debug", "ReleaseSmall": "small"}
KERNELS += [dict(next(k for k in KERNELS if k["name"] == src), name=f"{src}_{_SUFFIX[mode]}",
                 source=src, mode=mode) for src, mode in VARIANTS]


def zig_version() -> str:
    return importlib.metadata.version("ziglang")


def compile_ptx(source: str, mode: str, tmp: Path) -> str:
    """LLVM's PTX for tools/llvm_kernels/<source>.zig, built in the scratch folder `tmp`."""
    src = tmp / "src"
    if not src.exists():
        shutil.copytree(SOURCES, src)
    cmd = [sys.executable, "-m", "ziglang", "build-obj", "-target", "nvptx64-cuda",
           f"-mcpu={ARCH}", "-O", mode, "-femit-asm=out.ptx", "-fno-emit-bin",
           "--cache-dir", str(tmp / "cache"),
           "--global-cache-dir", str(tmp / "gcache"), f"{source}.zig"]
    run = subprocess.run(cmd, cwd=src, capture_output=True, text=True)
    if run.returncode:
        raise SystemExit(f"{source}: zig failed\n{run.stderr}")
    return (src / "out.ptx").read_text()


def ptxas_error(ptx: str) -> str | None:
    """ptxas's complaint about the file, or None when it compiles (needs the NVIDIA tools)."""
    sys.path.insert(0, str(REPO))
    from ptx2sass import oracle
    try:
        oracle.ptxas(ptx)
    except Exception as e:           # noqa: BLE001 (ptxas's message is what we record)
        return str(e).strip()
    return None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    args = ap.parse_args(argv)
    if zig_version() != PINNED_ZIG:
        print(f"warning: ziglang {zig_version()}, the corpus pins {PINNED_ZIG}", file=sys.stderr)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    kernels = []
    scratch = tempfile.TemporaryDirectory()
    for spec in KERNELS:
        mode = spec.get("mode", "ReleaseFast")
        source = spec.get("source", spec["name"])
        ptx = compile_ptx(source, mode, Path(scratch.name))
        (out / f"{spec['name']}.ptx").write_text(ptx)
        entry = {"file": f"{spec['name']}.ptx", "entry": source,
                 "sha256": hashlib.sha256(ptx.encode()).hexdigest(),
                 "source": f"tools/llvm_kernels/{source}.zig", "optimize": mode,
                 "grid": spec["grid"], "block": spec["block"], "params": spec["params"]}
        err = ptxas_error(ptx)
        if err:
            entry["ptxas_error"] = err
        kernels.append(entry)
        print(f"{spec['name']:<18} {len(ptx.splitlines()):5d} lines  {mode}"
              + (f"  ptxas: {err.splitlines()[0]}" if err else ""))
    scratch.cleanup()
    manifest = {"generator": "tools/harvest_llvm.py", "ziglang_version": zig_version(),
                "arch": ARCH, "kernels": kernels}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
