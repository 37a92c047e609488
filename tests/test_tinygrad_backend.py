"""The tinygrad backend (issue 7): tinygrad programs on DEV=SASSEMU (PTX from tinygrad's own
renderer, compiled by ptx2sass, run in ptx2sass's emulator) give the results of tinygrad's
CPU device. Its C goes through clang; where the machine has none (CI), the clang bundled in
PyPI's `ziglang` (a test dependency) stands in (tests/zig_as_clang.py)."""
import os
import pickle
import shutil
import subprocess
import sys

import numpy as np
import pytest

tinygrad = pytest.importorskip("tinygrad")
import ptx2sass.tinygrad as backend  # noqa: E402  (registers SASSEMU)
from tinygrad_programs import PROGRAMS, clang_launcher, same  # noqa: E402


def _clang_for_cpu_device() -> None:
    """Point tinygrad's CC at zig's clang unless a clang is on PATH. Set at import, because
    tinygrad reads CC once per process (its getenv is cached)."""
    if os.environ.get("CC") or shutil.which("clang"):
        return
    pytest.importorskip("ziglang")
    os.environ["CC"] = clang_launcher()


_clang_for_cpu_device()
REFERENCE = "CPU"

# Programs that cannot pass for a reason outside ptx2sass (strict: they fail the suite when
# they start passing, so the list stays true).
EXPECTED_FAILURES = {
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_program_matches_tinygrad(name):
    if name in EXPECTED_FAILURES:
        with pytest.raises(Exception):
            PROGRAMS[name]("SASSEMU")
        pytest.xfail(EXPECTED_FAILURES[name])
    ours = np.asarray(PROGRAMS[name]("SASSEMU"))
    ref = np.asarray(PROGRAMS[name](REFERENCE))
    assert ours.shape == ref.shape and ours.dtype == ref.dtype
    assert same(ours, ref), f"max abs diff {np.max(np.abs(ours.astype(float) - ref.astype(float)))}"


def test_tensor_core_matmul_runs_hmma(monkeypatch):
    """The tile-sized half matmul goes through mma.sync, which we select as HMMA."""
    libs = []
    compile_ = backend.SASSCompiler.compile
    monkeypatch.setattr(backend.SASSCompiler, "compile",
                        lambda self, src: libs.append(compile_(self, src)) or libs[-1])
    from tinygrad import Tensor, dtypes
    from tinygrad.helpers import Context
    from tinygrad_programs import on
    with on("SASSEMU"), Context(CCACHE=0):
        # a shape no other test uses, so tinygrad's in-process cache cannot skip the compile
        a = Tensor(np.full((48, 32), 0.5, np.float16))
        b = Tensor(np.full((32, 16), 0.25, np.float16))
        out = a.matmul(b, dtype=dtypes.float).numpy()
    assert np.all(out == 4.0)
    assert any("HMMA" in backend.sass_listing(lib) for lib in libs)


def test_documented_one_liner():
    code = ("import ptx2sass.tinygrad; from tinygrad import Tensor; "
            "print((Tensor([1,2,3])+1).tolist())")
    env = {**os.environ, "DEV": "SASSEMU"}
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip().splitlines()[-1] == "[2, 3, 4]"


def test_renderer_survives_spawned_workers():
    """tinygrad's compile workers are spawned processes that unpickle the renderer: a fresh
    interpreter must rebuild it (and its compiler) from the pickle alone."""
    from tinygrad.helpers import Target
    renderer = backend.SASSRenderer(Target("SASSEMU"))
    code = ("import pickle, sys; r = pickle.loads(sys.stdin.buffer.read()); "
            "print(type(r).__name__, type(r.compiler).__name__, r.compiler.arch)")
    run = subprocess.run([sys.executable, "-c", code], input=pickle.dumps(renderer),
                         capture_output=True, timeout=300)
    assert run.returncode == 0, run.stderr.decode()[-2000:]
    assert run.stdout.decode().split() == ["SASSRenderer", "SASSCompiler", "sm_89"]


def test_disassemble_shows_our_sass(capsys):
    ptx = """.version VERSION
.target TARGET
.address_size 64
.visible .entry k(.param .u64 p)
{
.reg .b64 %rd<2>;
ld.param.u64 %rd1, [p];
st.global.u32 [%rd1], 7;
ret;
}
"""
    compiler = backend.SASSCompiler()
    compiler.disassemble(compiler.compile(ptx))
    out = capsys.readouterr().out
    assert "Function : k" in out and "STG.E" in out and "EXIT" in out


def test_unsupported_ptx_is_a_tinygrad_compile_error():
    from tinygrad.device import CompileError
    with pytest.raises(CompileError, match="ptx2sass"):
        backend.SASSCompiler().compile("this is not PTX")


def _gpu_available(device: str) -> bool:
    try:
        from tinygrad import Device
        Device[device]
        return True
    except Exception:  # noqa: BLE001
        return False


@pytest.mark.gpu
@pytest.mark.parametrize("device", ["CUDA:SASS", "NV:SASS"])
@pytest.mark.parametrize("name", [n for n in PROGRAMS if n not in EXPECTED_FAILURES])
def test_program_on_a_real_gpu(name, device):
    """Our cubins loaded by the CUDA driver (CUDA:SASS) or by tinygrad's own NVIDIA driver
    (NV:SASS); runs only where that GPU runtime opens."""
    if not _gpu_available(device.split(":")[0]):
        pytest.skip(f"no NVIDIA GPU for {device} on this machine")
    ours = np.asarray(PROGRAMS[name](device))
    ref = np.asarray(PROGRAMS[name](REFERENCE))
    assert same(ours, ref)


def _nv_runtime_view(cubin: bytes, kernel: str) -> dict:
    """What tinygrad's NV runtime (NVProgram) reads from a cubin's ELF before it launches:
    the kernel's code section, its parameter-bank size and the module's register count."""
    from tinygrad.runtime.ops_nv import NVProgram
    from tinygrad.runtime.support.elf import elf_loader
    import struct
    _, sections, _ = elf_loader(cubin, force_section_align=128)
    seen = {"text": 0, "param_cbank": None, "regcount": None}
    for sh in sections:
        if sh.name == f".text.{kernel}":
            seen["text"] = sh.header.sh_size
        elif sh.name.startswith(".nv.info"):
            for _, param, data in NVProgram._parse_elf_info(None, sh):
                if sh.name == f".nv.info.{kernel}" and param == 0xa:
                    seen["param_cbank"] = struct.unpack_from("IH", data)[1]
                elif sh.name == ".nv.info" and param == 0x2f:
                    seen["regcount"] = struct.unpack_from("II", data)[1]
    return seen


def test_nv_runtime_reads_our_cubin_like_ptxas():
    """DEV=NV:SASS has no GPU here: check instead that tinygrad's NV loader finds in our cubin
    what it finds in ptxas's for the same tinygrad kernel (code, parameter bank size, a
    register count), and that registration offers SASS on NV."""
    from ptx2sass import oracle
    from tinygrad.helpers import Target
    from tinygrad.runtime import ops_nv
    assert getattr(ops_nv.NVDevice, "_ptx2sass", False)
    ptx = backend.ptx_for(open(os.path.join(os.path.dirname(__file__), "corpus", "tinygrad",
                                            "add_float32__E_32_32_4.ptx")).read(), "sm_89")
    kernel = "E_32_32_4"
    ours = _nv_runtime_view(backend.SASSCompiler().compile(ptx), kernel)
    theirs = _nv_runtime_view(oracle.ptxas(ptx, "sm_89").output, kernel)
    assert ours["text"] > 0 and ours["regcount"] and ours["param_cbank"] == theirs["param_cbank"]
    assert type(backend.SASSRenderer(Target("NV", arch="sm_89")).compiler) is backend.SASSCompiler


def test_importing_the_backend_leaves_gpu_runtimes_unloaded():
    """Registration offers SASS on CUDA and NV when tinygrad imports their runtime modules,
    not by importing them itself (their generated bindings cost ~0.5 s of CPU in every
    process, tinygrad's compile workers included)."""
    code = ("import sys, ptx2sass.tinygrad; "
            "print(sorted(m for m in sys.modules if m.endswith(('ops_nv', 'ops_cuda')))); "
            "from tinygrad.runtime import ops_nv, ops_cuda; "
            "print(ops_nv.NVDevice._ptx2sass, ops_cuda.CUDADevice._ptx2sass)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split("\n")[:2] == ["[]", "True True"]


def test_code_version_follows_every_file(tmp_path, monkeypatch):
    """The compile and program caches' key: a file edited (size or time), added or removed
    gives another version; the same files the same one."""
    from ptx2sass.cache import code_version
    pkg = tmp_path / "cached_pkg_for_test"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "table.json").write_text("[1]")
    monkeypatch.syspath_prepend(str(tmp_path))
    version = code_version.__wrapped__
    first = version(("cached_pkg_for_test",))
    assert version(("cached_pkg_for_test",)) == first
    seen = {first}
    os.utime(pkg / "sub" / "table.json", ns=(1, 1))
    seen.add(version(("cached_pkg_for_test",)))
    (pkg / "sub" / "table.json").write_text("[22]")
    os.utime(pkg / "sub" / "table.json", ns=(1, 1))
    seen.add(version(("cached_pkg_for_test",)))
    (pkg / "new.py").write_text("")
    seen.add(version(("cached_pkg_for_test",)))
    (pkg / "new.py").unlink()
    assert len(seen) == 4


def test_kept_cubins_and_programs_are_what_a_fresh_compile_and_load_make(monkeypatch):
    """tinygrad's disk cache gives back the compile's cubin and the loader's program (the
    same instructions, banks and metadata), and a kept cubin is not compiled again."""
    from ptx2sass.emu import loader
    from tinygrad.helpers import diskcache_get
    ptx = backend.ptx_for(open(os.path.join(os.path.dirname(__file__), "corpus", "tinygrad",
                                            "add_float32__E_32_32_4.ptx")).read(), "sm_89")
    ptx += f"// {os.getpid()} {id(ptx)}\n"          # a source no earlier run kept
    compiler = backend.SASSCompiler()
    fresh = compiler.compile(ptx)
    assert compiler.compile_cached(ptx) == fresh
    monkeypatch.setattr(backend.SASSCompiler, "compile", lambda self, src: pytest.fail("compiled again"))
    assert compiler.compile_cached(ptx) == fresh
    assert diskcache_get(compiler.cachekey, ptx) == fresh
    made = loader.load_program(fresh, "E_32_32_4")
    first = backend.load_program(fresh, "E_32_32_4")           # loads and keeps it
    monkeypatch.setattr(loader, "load_program", lambda *a: pytest.fail("loaded again"))
    kept = backend.load_program(fresh, "E_32_32_4")
    assert kept is not first and vars(kept) == vars(made) == vars(first)
