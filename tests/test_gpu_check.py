"""tools/gpu_check (the one-command GPU check) without a GPU: the comparison logic on made-up
outputs, `prepare` on a tiny selection, `run` skipping where there is no GPU, `run` on the
emulator standing in for one (with a corrupted output, a crashing, a hanging and a faulting
launch injected), the calibration kernels as ptxas compiles them, and tools/fit_timing.py on
a synthetic report whose constants are known."""
import json
import re
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tools import fit_timing
from tools.gpu_check import calibration
from tools.gpu_check.bundle import Bundle
from tools.gpu_check.compare import compare_outputs, mismatch
from tools.gpu_check.run import NO_GPU
from tools.gpu_check.worker import chain_bytes

REPO = Path(__file__).resolve().parent.parent


# --------------------------------------------------------------------------- comparisons

def _b(values, dtype):
    return np.asarray(values, dtype=dtype).tobytes()


def test_bits_reports_the_first_difference():
    got, want = _b([1, 2, 3, 4], np.uint32), _b([1, 2, 7, 4], np.uint32)
    assert mismatch({"kind": "bits", "dtype": "u32"}, got, got) is None
    why = mismatch({"kind": "bits", "dtype": "u32"}, got, want)
    assert why.startswith("1 of 4 differ; first at [2]")


def test_bits_tells_nan_payloads_and_zero_signs_apart_where_equal_does_not():
    nan_a, nan_b = np.array([0x7FC00000, 0x7FC00001], np.uint32).view(np.float32)
    got, want = _b([nan_a, -0.0], np.float32), _b([nan_b, 0.0], np.float32)
    assert mismatch({"kind": "bits", "dtype": "f32"}, got, want).startswith("2 of 2 differ")
    assert mismatch({"kind": "equal", "dtype": "f32"}, got, want) is None


def test_ulp_and_close():
    want = _b([1.0, 100.0], np.float32)
    one_ulp = _b([np.nextafter(np.float32(1), np.float32(2)), 100.0], np.float32)
    assert mismatch({"kind": "ulp", "dtype": "f32", "ulp": 1}, one_ulp, want) is None
    assert mismatch({"kind": "ulp", "dtype": "f32", "ulp": 0.5}, one_ulp, want) is not None
    near = _b([1.001, 100.1], np.float32)
    assert mismatch({"kind": "close", "dtype": "f32", "rtol": 2e-3, "atol": 0}, near, want) is None
    assert mismatch({"kind": "close", "dtype": "f32", "rtol": 1e-4, "atol": 0}, near, want) is not None


def test_close_nan_handling_follows_the_check():
    got, want = _b([np.nan, 1.0], np.float32), _b([np.nan, 1.0], np.float32)
    assert mismatch({"kind": "close", "dtype": "f32", "rtol": 1e-3, "nan_equal": True}, got, want) is None
    assert mismatch({"kind": "close", "dtype": "f32", "rtol": 1e-3, "nan_equal": False}, got, want) is not None


def test_bf16_and_fp8_are_read_as_floats():
    # bf16 0x3F80 = 1.0, 0x3F81 = 1.0078125; e4m3 0x38 = 1.0, 0x39 = 1.125
    assert mismatch({"kind": "close", "dtype": "bf16", "rtol": 1e-2}, _b([0x3F81], np.uint16),
                    _b([0x3F80], np.uint16)) is None
    assert mismatch({"kind": "close", "dtype": "bf16", "rtol": 1e-3}, _b([0x3F81], np.uint16),
                    _b([0x3F80], np.uint16)) is not None
    assert mismatch({"kind": "close", "dtype": "fp8e4m3", "rtol": 0.13}, _b([0x39], np.uint8),
                    _b([0x38], np.uint8)) is None
    assert mismatch({"kind": "equal", "dtype": "fp8e4m3"}, _b([0x7F], np.uint8), _b([0xFF], np.uint8)) is None


def test_float64_expected_values_for_a_narrower_output():
    check = {"kind": "close", "dtype": "f16", "want_dtype": "f64", "rtol": 1e-3, "atol": 1e-3}
    assert mismatch(check, _b([0.3333], np.float16), _b([1 / 3], np.float64)) is None
    assert mismatch(check, _b([0.3], np.float16), _b([1 / 3], np.float64)) is not None


def test_short_output_is_a_mismatch():
    assert mismatch({"kind": "bits", "dtype": "u32"}, b"\0" * 4, b"\0" * 8) == "1 elements, expected 2"


def test_compare_outputs_verdicts():
    outputs = [{"buffer": "y", "check": {"kind": "close", "dtype": "f32", "rtol": 1e-3, "atol": 0}},
               {"buffer": "n", "check": {"kind": "bits", "dtype": "s32"}}]
    want = {"y": _b([1.0, 2.0], np.float32), "n": _b([5], np.int32)}
    same = {"y": want["y"], "n": want["n"]}
    close = {"y": _b([1.0, 2.0001], np.float32), "n": want["n"]}
    wrong = {"y": want["y"], "n": _b([6], np.int32)}
    assert compare_outputs(outputs, same, want, how="bits")["verdict"] == "same"
    assert compare_outputs(outputs, close, want, how="bits")["verdict"] == "pass"
    assert compare_outputs(outputs, close, want)["verdict"] == "pass"
    bad = compare_outputs(outputs, wrong, want)
    assert bad["verdict"] == "fail" and "n" in bad["detail"]
    assert compare_outputs(outputs, same, {"y": None, "n": None})["verdict"] == "none"


def test_chain_is_one_cycle_through_every_element():
    base, stride, size = 0x7000_0000, 128, 64 * 128
    words = np.frombuffer(chain_bytes({"stride": stride, "seed": 3}, size, base), np.uint64)
    seen, p = set(), base
    for _ in range(size // stride):
        seen.add(p)
        p = int(words[(p - base) // 8])
    assert p == base and len(seen) == size // stride


def test_sizes_resolve_against_the_sm_count():
    assert calibration.resolve_dims(["sms*2", 1, "sms"], 132) == [264, 1, 132]
    with pytest.raises(ValueError):
        calibration.resolve("warps", 4)


# --------------------------------------------------------------------------- calibration kernels

@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_calibration_loops_are_what_the_fit_assumes(arch):
    """ptxas keeps each benchmark's measured loop as written: one instruction of the chain's
    opcode(s) per step (not unrolled further, nothing folded away), one load per chase step."""
    from tools.gpu_check.prepare import _loop_opcodes
    from ptx2sass import oracle
    seen = {}
    for b in calibration.suite(arch):
        if b.kernel in seen:
            continue
        run = oracle.ptxas(b.ptx, arch, name=b.kernel + ".ptx")
        assert run.ok, (b.kernel, run.stderr[:500])
        seen[b.kernel] = loop = _loop_opcodes(run.output, b.kernel, arch)
        if b.kind in ("chain", "throughput", "occupancy", "bank"):
            n = sum(loop.get(op, 0) for op in b.meta.get("sass", ["FFMA" if b.kind == "occupancy" else "LDS"]))
            per_step = n / b.meta["ops_per_iteration"]
            assert 1 <= round(per_step) <= 2 and abs(per_step - round(per_step)) < 0.05, (b.kernel, loop)
        elif b.kind == "chase":
            assert loop.get("LDG") == 16, (b.kernel, loop)


# --------------------------------------------------------------------------- prepare and run

@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("bundle")
    run = subprocess.run([sys.executable, "-m", "tools.gpu_check", "prepare", "--arch", "sm_89", "--out", str(out),
                          "--corpus", "zluda", "--corpus", "cuda", "--limit", "2", "--calibration", "chain,empty",
                          "--jobs", "1", "--no-tinygrad", "--no-wheels"],
                         cwd=REPO, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-2000:]
    return out


def _run(bundle, tmp_path, *extra, env=None):
    report = tmp_path / "out" / "gpu_report.json"
    run = subprocess.run([sys.executable, "-m", "tools.gpu_check", "run", "--bundle", str(bundle),
                          "--report", str(report), *extra], cwd=REPO, capture_output=True, text=True,
                         timeout=900, env={**os.environ, **(env or {})})
    return run, report


def test_prepare_records_cubins_references_and_the_emulator(bundle):
    b = Bundle(bundle)
    assert b.arch == "sm_89" and len(b.launches) == 4
    for spec in b.launches:
        assert spec["cubins"]["ptxas"]["status"] == "ok"
        for variant in ("ptxas", "ours"):
            emu = spec["emu"][variant]
            assert emu["status"] == "ok" and emu["cycles"] > 0 and emu["hazards"] == 0
            assert emu["reference"]["verdict"] == "pass", (spec["id"], variant, emu["reference"])
        assert all(o["expected"] for o in spec["outputs"])
    ids = {c["id"] for c in b.calibration}
    assert "empty" in ids and "chain/ffma/32" in ids and "chase/ca/4K" not in ids
    chain = next(c for c in b.calibration if c["id"] == "chain/ffma/96")
    assert chain["meta"]["loop_opcodes"]["FFMA"] == 64 and chain["emu"]["cycles"] > 0


def _has_gpu() -> bool:
    from tools.gpu_check.device import CudaDevice, NoDevice
    try:
        CudaDevice()
    except (NoDevice, Exception):  # noqa: BLE001
        return False
    return True


def test_run_without_a_gpu_skips_cleanly(bundle, tmp_path):
    if _has_gpu():
        pytest.skip("this machine has a GPU")
    run, report = _run(bundle, tmp_path, "--device", "cuda")
    assert run.returncode == NO_GPU, run.stderr[-1000:]
    assert "no GPU here, nothing ran" in run.stdout and "libcuda" in run.stdout
    doc = json.loads(report.read_text())
    assert doc["status"] == "skipped" and "no GPU" in doc["reason"]
    assert "skipped" in report.with_suffix(".md").read_text()


def test_run_on_the_emulator_reports_an_injected_mismatch(bundle, tmp_path):
    """The emulator stands in for the GPU; one launch's output is corrupted on its way back:
    the report must show that launch failing its reference and the emulator comparison, and
    every other launch passing."""
    victim = Bundle(bundle).launches[1]["id"]
    run, report = _run(bundle, tmp_path, "--device", "emulator", "--stages", "launches",
                       env={"GPU_CHECK_FAKE": f"corrupt:{victim}:ours"})
    assert run.returncode == 0, run.stderr[-2000:]
    doc = json.loads(report.read_text())
    assert doc["status"] == "ok"
    for e in doc["launches"]:
        ours, theirs = e["ours"]["gpu"], e["ptxas"]["gpu"]
        assert theirs["status"] == "ok" and theirs["reference"]["verdict"] == "pass"
        assert theirs["emulator"]["verdict"] == "same"
        if e["id"] == victim:
            assert ours["reference"]["verdict"] == "fail" and ours["emulator"]["verdict"] == "fail"
            assert e["ours_vs_ptxas"] == "fail"
        else:
            assert ours["reference"]["verdict"] == "pass" and e["ours_vs_ptxas"] == "same"
    assert any(victim in p and "reference" in p for p in doc["problems"])
    assert doc["summary"]["all"]["ours reference ok"] == 3
    assert doc["mismatch_outputs"] and (report.parent / doc["mismatch_outputs"]).is_file()
    assert victim in report.with_suffix(".md").read_text()


def test_run_survives_a_crash_a_hang_and_a_fault(bundle, tmp_path):
    launches = [s["id"] for s in Bundle(bundle).launches]
    fake = f"crash:{launches[0]}:ours,hang:{launches[1]}:ptxas,fault:{launches[2]}:ptxas"
    run, report = _run(bundle, tmp_path, "--device", "emulator", "--stages", "launches",
                       "--unit-timeout", "5", env={"GPU_CHECK_FAKE": fake})
    assert run.returncode == 0, run.stderr[-2000:]
    doc = json.loads(report.read_text())
    got = {e["id"]: e for e in doc["launches"]}
    assert got[launches[0]]["ours"]["gpu"]["status"] == "crash"
    assert got[launches[1]]["ptxas"]["gpu"]["status"] == "timeout"
    assert got[launches[2]]["ptxas"]["gpu"]["status"] == "run error"
    assert "ILLEGAL_ADDRESS" in got[launches[2]]["ptxas"]["gpu"]["error"]
    # the units after each failure still ran, in fresh worker processes
    assert got[launches[0]]["ptxas"]["gpu"]["status"] == "ok"
    assert got[launches[1]]["ours"]["gpu"]["status"] == "ok"
    assert got[launches[3]]["ours"]["gpu"]["status"] == "ok"
    assert doc["stages"]["launches"]["workers"] >= 4


def test_cubins_that_do_not_load_fall_back_to_the_drivers_jit(bundle, tmp_path):
    victim = Bundle(bundle).launches[0]["id"]
    run, report = _run(bundle, tmp_path, "--device", "emulator", "--stages", "launches",
                       env={"GPU_CHECK_FAKE": f"noload:{victim}:ptxas"})
    assert run.returncode == 0, run.stderr[-2000:]
    doc = json.loads(report.read_text())
    e = next(e for e in doc["launches"] if e["id"] == victim)
    assert e["ptxas"]["gpu"]["status"] == "load error"
    assert e["jit"]["gpu"]["status"] == "ok" and e["jit"]["gpu"]["reference"]["verdict"] == "pass"
    assert not any("jit" in x for x in doc["launches"] if x["id"] != victim)
    assert "jit" in doc["notes"] and doc["summary"]["all"]["jit ran"] == 1


def test_run_calibration_on_the_emulator_feeds_the_fit(bundle, tmp_path):
    run, report = _run(bundle, tmp_path, "--device", "emulator", "--stages", "calibration", "--repeats", "1",
                       "--select", "^(empty|chain/ffma/)")
    assert run.returncode == 0, run.stderr[-2000:]
    doc = json.loads(report.read_text())
    assert {c["id"] for c in doc["calibration"] if "gpu" in c} == {"empty", "chain/ffma/32", "chain/ffma/96"}
    ffma = doc["fit"]["latency"]["ffma"]
    # the emulator's %clock64 counts four per instruction: a chain of FFMAs reads 4 a step
    assert ffma["gpu"] == pytest.approx(4.0, abs=0.3) and ffma["model"] == pytest.approx(4.0, abs=0.3)


# --------------------------------------------------------------------------- the fit

def _synthetic_report(arch="sm_90", sms=132, mhz=1755.0):
    """A report as an H100 with known constants would give it."""
    latency = {"ffma": 4, "fadd": 4, "fmul": 4, "hfma2": 4, "imad": 4, "iadd3": 4, "lop3_shf": 4,
               "popc": 12, "mufu_rsq": 18, "mufu_ex2": 20, "cvt_i2f_f2i": 14, "dfma": 8, "dadd": 8,
               "shfl": 26, "lds": 30, "hmma": 33}
    per_clock = {"ffma": 128, "fadd": 128, "hfma2": 128, "imad": 64, "iadd3": 64, "lop3_shf": 64,
                 "mufu_rsq": 16, "cvt_i2f_f2i": 16, "dfma": 64, "shfl": 32, "lds": 32, "hmma": 16}
    l1, l2, dram, l1_size, l2_size = 33.0, 260.0, 640.0, 200 * 1024, 50 << 20
    entries = []
    for b in calibration.suite(arch):
        m = dict(b.meta)
        if b.kind in ("chain", "throughput", "occupancy", "bank"):
            sass = m.get("sass") or ["FFMA" if b.kind == "occupancy" else "LDS"]
            m["loop_opcodes"] = {sass[0]: m["ops_per_iteration"] * (2 if m.get("op") == "lop3_shf" else 1),
                                 "ISETP": 1, "BRA": 1}
            if m.get("op") == "lop3_shf":
                m["loop_opcodes"] = {"LOP3": m["ops_per_iteration"], "SHF": m["ops_per_iteration"], "BRA": 1}
            if m.get("op") == "cvt_i2f_f2i":
                m["loop_opcodes"] = {"I2FP": m["ops_per_iteration"], "F2I": m["ops_per_iteration"]}
        gpu = {"status": "ok", "ctas": 1, "sms_used": 1}
        cycles = None
        if b.kind == "chain":
            op = m["op"]
            step = latency[op] * (2 if op in ("lop3_shf", "cvt_i2f_f2i") else 1)
            if op == "cvt_i2f_f2i":
                step += latency["iadd3"]
            cycles = 500 + m["iterations"] * m["ops_per_iteration"] * step
        elif b.kind == "throughput":
            per_sm = per_clock[m["op"]] / (2 if m["op"] in ("lop3_shf", "cvt_i2f_f2i") else 1)
            n = (2 if m["op"] in ("lop3_shf", "cvt_i2f_f2i") else 1) * m["ops_per_iteration"] * m["iterations"]
            cycles = m["threads_per_cta"] * n / per_sm
            gpu.update(ctas=sms, sms_used=sms)
        elif b.kind == "chase":
            f = m["footprint"]
            per = (l1 if f <= l1_size and m["cache"] == "ca" else l2) if f <= l2_size else dram
            cycles = per * m["loads"]
        elif b.kind == "bank":
            ways = 1 if m["stride_words"] == 0 else math.gcd(m["stride_words"], 32)
            cycles = (30 + 2 * (ways - 1)) * m["iterations"] * m["ops_per_iteration"]
        elif b.kind == "occupancy":
            rate = min(128.0, m["warps_per_sm"] * 32 / 4)            # 4-cycle FFMA, 128 lanes/clock
            total = m["threads_per_cta"] * m["ops_per_iteration"] * m["iterations"] * m["ctas_per_sm"]
            cycles = total / rate
            gpu.update(ctas=sms * m["ctas_per_sm"], sms_used=sms)
            gpu["time_us"] = {"median": cycles / mhz, "min": cycles / mhz, "n": 3}
        elif b.kind == "stream":
            gpu["time_us"] = {"median": m["bytes"] / 3000e3, "min": 0, "n": 5}          # 3 TB/s
            cycles = 1e6
        elif b.kind == "empty":
            gpu["time_us"] = {"median": 2.5, "min": 2.4, "n": 5}
            cycles = 0
        gpu["cycles"] = {"min": cycles, "median": cycles, "max": cycles}
        gpu["ns"] = {k: v / mhz * 1000 for k, v in gpu["cycles"].items()}
        if b.kind == "throughput":
            gpu["time_us"] = {"median": cycles / mhz, "min": cycles / mhz, "n": 5}
        entries.append({"id": b.id, "kind": b.kind, "meta": m, "gpu": gpu})
    return {"device": {"name": "synthetic H100", "arch": arch, "sms": sms, "l2_bytes": l2_size},
            "calibration": entries}, latency, per_clock


def test_fit_recovers_the_constants_of_a_synthetic_report():
    report, latency, per_clock = _synthetic_report()
    f = fit_timing.fit(report)
    assert f["clock_mhz"] == pytest.approx(1755.0, rel=1e-3)
    for op, want in latency.items():
        assert f["latency"][op]["gpu"] == pytest.approx(want, abs=0.01), op
    for op, want in per_clock.items():
        got = f["throughput"][op]
        per_instruction = want / (2 if op in ("lop3_shf", "cvt_i2f_f2i") else 1)
        assert got["per_sm_per_clock"] == pytest.approx(per_instruction, rel=1e-3), op
        assert got["by_events"] == pytest.approx(per_instruction, rel=1e-3), op
    mem = f["memory"]
    assert (mem["l1_hit"], mem["l2_hit"], mem["dram"]) == (33.0, 260.0, 640.0)
    assert mem["l1_bytes_est"] == 192 * 1024 and mem["l2_bytes_est"] == 49152 * 1024
    assert f["bank"]["conflict_free"] == pytest.approx(30) and f["bank"]["per_extra_way"] == pytest.approx(2)
    assert f["occupancy"]["peak"] == pytest.approx(128) and f["occupancy"]["warps_for_90_percent"] == 16
    assert f["bandwidth_gb_s"]["1024 MiB"] == pytest.approx(3000, rel=1e-3)
    assert f["launch_overhead_us"] == 2.5
    assert f["constants"]["VARIABLE"]["LDG (DRAM)"] == 640 and f["constants"]["FIXED"]["FFMA"] == 4
    assert "L2 hit 260.0" in fit_timing.markdown(f)


def test_fit_leaves_out_what_did_not_run():
    report, _, _ = _synthetic_report()
    for e in report["calibration"]:
        if e["kind"] in ("chase", "bank") or e["id"].startswith("chain/dfma"):
            e["gpu"] = {"status": "timeout", "error": "killed"}
    f = fit_timing.fit(report)
    assert "dfma" not in f["latency"] and "l1_hit" not in f["memory"] and not f["bank"]["by_stride"]
    assert f["latency"]["ffma"]["gpu"] == pytest.approx(4)


def test_fit_command_line(tmp_path):
    report, _, _ = _synthetic_report()
    path = tmp_path / "r.json"
    path.write_text(json.dumps(report))
    run = subprocess.run([sys.executable, "-m", "tools.fit_timing", str(path), "--json"], cwd=REPO,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["latency"]["dfma"]["gpu"] == pytest.approx(8)
    path.write_text(json.dumps({"status": "skipped", "calibration": []}))
    run = subprocess.run([sys.executable, "-m", "tools.fit_timing", str(path)], cwd=REPO,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 1 and "no calibration timings" in run.stderr


# --------------------------------------------------------------------------- the GPU machine's side

RUN_SIDE = ("__main__", "bundle", "calibration", "compare", "device", "report", "run", "worker")


@pytest.mark.parametrize("module", RUN_SIDE)
def test_run_side_parses_as_python_3_8(module):
    """The GPU machine's python3 may be older than ours: `run` keeps to Python 3.8's grammar."""
    import ast
    ast.parse((REPO / "tools" / "gpu_check" / f"{module}.py").read_text(), feature_version=(3, 8))


def _without(tmp_path, *packages) -> dict:
    """An environment whose Python (and its child processes) cannot import `packages`."""
    site = tmp_path / "blocker"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name.split('.')[0] in {set(packages)!r}:\n"
        "            raise ImportError('blocked: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n")
    return {"PYTHONPATH": os.pathsep.join([str(site), str(REPO)])}


@pytest.fixture(scope="module")
def mock_libcuda(tmp_path_factory):
    """tests/data/mock_libcuda.c built as libcuda.so.1 (skips without a C compiler)."""
    import shutil
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    out = tmp_path_factory.mktemp("mockcuda")
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(out / "libcuda.so.1"),
                    str(REPO / "tests" / "data" / "mock_libcuda.c")], check=True, capture_output=True)
    return out


def _mock_env(mock_libcuda, tmp_path, **extra) -> dict:
    env = _without(tmp_path, "numpy", "cuda", "ptx2sass")
    env["LD_LIBRARY_PATH"] = str(mock_libcuda)
    env.update(extra)
    return env


DRIVE = """
import json, struct
from tools.gpu_check.device import open_device, Buffer, DeviceError
d = open_device("cuda")
out = {"info": d.info()}
m = d.load(b"\\x7fELF" + bytes(60))
fn, out["facts"] = d.function(m, "k")
r = d.run(fn, (2, 1, 1), (4, 1, 1), 0, [Buffer("out", 32, None, 0xAB)],
          [{"buffer": "out"}, {"type": "u32", "value": 3, "bytes": "03000000"}], ["out"], repeats=3)
out["words"], out["times"] = list(struct.unpack("<8I", r.outputs["out"])), r.times_ms
for what, call in (("load", lambda: d.load(b"junk")), ("function", lambda: d.function(m, "missing")),
                   ("fault", lambda: d.run(d.function(m, "fault")[0], (1, 1, 1), (1, 1, 1), 0, [Buffer("o", 4)],
                                           [{"buffer": "o"}, {"bytes": "00000000"}], ["o"]))):
    try:
        call()
    except DeviceError as e:
        out[what] = [e.code, e.sticky]
print(json.dumps(out))
"""


def test_the_driver_through_ctypes_on_a_stand_in_libcuda(mock_libcuda, tmp_path):
    """device.py's ctypes calls (the _v2 entry points, 64-bit device pointers, the kernel
    parameter array, error names, stickiness) against a C stand-in for libcuda.so.1, in a
    Python that has neither NumPy nor cuda-bindings nor ptx2sass."""
    run = subprocess.run([sys.executable, "-c", DRIVE], cwd=REPO, capture_output=True, text=True, timeout=120,
                         env={**os.environ, **_mock_env(mock_libcuda, tmp_path)})
    assert run.returncode == 0, run.stderr[-2000:]
    out = json.loads(run.stdout)
    assert out["info"]["arch"] == "sm_90" and out["info"]["sms"] == 132 and out["info"]["name"] == "Mock GPU"
    assert out["facts"]["registers"] == 42
    assert out["words"] == [3 * i for i in range(8)] and out["times"] == [0.25] * 3
    assert out["load"] == ["CUDA_ERROR_INVALID_IMAGE", False]
    assert out["function"] == ["CUDA_ERROR_NOT_FOUND", False]
    assert out["fault"] == ["CUDA_ERROR_ILLEGAL_ADDRESS", True]


def test_run_without_numpy_on_a_stand_in_driver_writes_a_report(bundle, mock_libcuda, tmp_path):
    """The whole run (workers, comparisons, report, fit) with only the standard library: the
    stand-in's kernels write the wrong numbers, so every launch fails its reference, cleanly."""
    # the budget only bounds a loaded machine (each stage ends at its share of it); with 120 s
    # the run came back "partial" in 2 of 3 full suites at load ~20, never alone (a stage
    # cut short is the suspected cause); the run takes ~7 s
    run, report = _run(bundle, tmp_path, "--budget-s", "900", "--stages", "launches,calibration",
                       env=_mock_env(mock_libcuda, tmp_path, MOCK_CUDA_CC="89"))
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    doc = json.loads(report.read_text())
    assert doc["status"] == "ok" and doc["device"]["name"] == "Mock GPU", (doc.get("stages"), doc.get("seconds"))
    assert all(s["launches"] for s in [doc["summary"]["all"]]) if "all" in doc.get("summary", {}) else True
    results = [l["ptxas"]["gpu"] for l in doc["launches"] if "gpu" in l.get("ptxas", {})]
    assert results and all(r["status"] in ("ok", "crash") for r in results)
    assert "Timing model calibration" in report.with_suffix(".md").read_text()


def test_run_keeps_to_its_budget_when_every_kernel_hangs(bundle, mock_libcuda, tmp_path):
    """Kernels that never end: each is killed after --unit-timeout, and the run ends by its
    budget (plus the report's writing) with the units it reached marked `timeout`."""
    import time
    t = time.time()
    run, report = _run(bundle, tmp_path, "--budget-s", "12", "--unit-timeout", "2",
                       "--stages", "launches,calibration", env=_mock_env(mock_libcuda, tmp_path, MOCK_CUDA_HANG="1", MOCK_CUDA_CC="89"))
    spent = time.time() - t
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert spent < 12 + 8, spent
    doc = json.loads(report.read_text())
    assert doc["status"] in ("ok", "partial")
    gpu = [l["ptxas"]["gpu"] for l in doc["launches"] if "gpu" in l.get("ptxas", {})]
    assert gpu and all(g["status"] == "timeout" for g in gpu)


def test_variants_rewrite_control_fields_only_and_run(bundle, tmp_path):
    """`variants`: a control-code experiment keeps every instruction's bits below the control
    field, sets what it says (`slow`: stall 15 and every wait; `stallin_A_B`: stall 15 on
    instructions A..B-1 only), and `run --variants ptxas,ours,all` runs it and reports it."""
    import shutil
    from tools.gpu_check.variants import add_variants, instruction_count, text_sections
    work = tmp_path / "bundle"
    shutil.copytree(bundle, work)
    target = Bundle(work).launches[0]["id"]
    assert add_variants(work, "^" + re.escape(target) + "$", ["slow", "stallin_0_2"], log=lambda *a: None) == 4
    b = Bundle(work)
    spec = next(s for s in b.launches if s["id"] == target)
    base = b.blob(spec["cubins"]["ours"]["cubin"])
    assert len(base) == len(b.blob(spec["cubins"]["ours_slow"]["cubin"]))
    count = instruction_count(base)
    for variant, touched in (("ours_slow", range(count)), ("ours_stallin_0_2", range(2))):
        new = b.blob(spec["cubins"][variant]["cubin"])
        index = 0
        for _name, offset, size in text_sections(base):
            for at in range(offset, offset + size, 16):
                old_word = int.from_bytes(base[at:at + 16], "little")
                new_word = int.from_bytes(new[at:at + 16], "little")
                assert old_word & ((1 << 105) - 1) == new_word & ((1 << 105) - 1)
                control = new_word >> 105
                if index in touched:
                    assert control & 0xF == 15
                    if variant == "ours_slow":
                        assert (control >> 11) & 0x3F == 0x3F and (control >> 17) & 0xF == 0
                else:
                    assert new_word == old_word
                index += 1
    assert spec["emu"]["ours_slow"] == spec["emu"]["ours"]
    run, report = _run(work, tmp_path, "--device", "emulator", "--stages", "launches",
                       "--variants", "ptxas,ours,all", "--select", re.escape(target))
    assert run.returncode == 0, run.stderr[-2000:]
    doc = json.loads(report.read_text())
    entry = next(e for e in doc["launches"] if e["id"] == target)
    for variant in ("ours_slow", "ptxas_slow", "ours_stallin_0_2"):
        gpu = entry[variant]["gpu"]
        assert gpu["status"] == "ok" and gpu["emulator"]["verdict"] == "same", (variant, gpu)
        assert gpu["vs_ptxas"]["verdict"] == "same"
    assert "Experiment variants" in report.with_suffix(".md").read_text()


def test_fuzz_source_is_a_runnable_launch():
    """`--corpus fuzz`: a fresh fuzz program as a launch both compilers can build, with
    outputs compared bit for bit and no reference (the GPU judges the emulator)."""
    from tools.gpu_check import sources
    key = sources.keys("fuzz")[0]
    launch = sources.launch("fuzz", key)
    assert launch.corpus == "fuzz" and launch.kernel in launch.ptx
    assert {o["buffer"] for o in launch.outputs} == {"out", "atom"}
    assert all(o["check"]["kind"] == "bits" for o in launch.outputs)
    assert launch.expected is None and launch.ptx_path.is_file()
    buffers = {p["buffer"] for p in launch.params if "buffer" in p}
    assert buffers <= set(launch.buffers)


def test_a_prefix_check_ignores_what_follows_the_defined_bytes():
    """ZLUDA compares only a test's first `output_bytes` (ldmatrix's second warp writes
    past them from reads past its global array: run 25 on the H200 wrote other bytes there
    than the emulator); the check's `bytes` holds both sides to that prefix."""
    outputs = [{"buffer": "o", "check": {"kind": "bits", "dtype": "u32", "bytes": 8}}]
    want = {"o": _b([1, 2, 0, 0], np.uint32)}
    got = {"o": _b([1, 2, 8, 9], np.uint32)}
    assert compare_outputs(outputs, got, want, how="bits")["verdict"] == "same"
    assert compare_outputs(outputs, {"o": _b([1, 3, 0, 0], np.uint32)}, want)["verdict"] == "fail"


def test_zluda_launches_compare_only_what_zluda_compares():
    from tools.gpu_check import sources
    if "ldmatrix" not in sources.keys("zluda"):
        pytest.skip("no ZLUDA corpus beside this checkout")
    launch = sources.launch("zluda", "ldmatrix")
    assert launch.outputs[0]["check"]["bytes"] == 256 < launch.sizes["output"]


def test_realworld_source_launches_each_annotated_kernel_from_its_annotation():
    """`--corpus realworld`: the bundle's arch's real-world modules, every annotated kernel
    with the annotation's inputs (tools/realworld.launch_params), every buffer compared bit
    for bit, the corpus's own held-back split."""
    from tools import realworld as rw
    from tools.gpu_check import sources
    keys = sources.keys("realworld")
    assert keys and all(k.count(".") >= 2 for k in keys)
    module, kernel = next((m, k) for m in rw.manifest() if m["arch"] == sources.REALWORLD_ARCH and m["ptx"]
                          for k in m.get("kernels", []) if k.get("run") and "cluster" not in k["run"])
    key = next(k for k in keys if k.endswith("." + kernel["entry"]) and k.startswith(module["ptx"].split("/")[-1][:-4]))
    launch = sources.launch("realworld", key)
    values = rw.launch_params(kernel["run"], seed=0)
    arrays = [v for v in values if isinstance(v, np.ndarray)]
    assert [launch.buffers[p["buffer"]] for p in launch.params if "buffer" in p] == [a.tobytes() for a in arrays]
    assert len(launch.params) == len(values) and launch.held_back == module["held_back"]
    assert {o["buffer"] for o in launch.outputs} == {p["buffer"] for p in launch.params if "buffer" in p}
    assert launch.kernel == kernel["entry"] and launch.kernel in launch.ptx


def test_fuzzfile_source_runs_a_saved_program_for_the_gpus_arch(monkeypatch):
    """`--corpus fuzzfile`: a saved fuzz program (its `// fuzz-case:` header) as a launch,
    keyed by the file's stem, for the GPU's arch whatever the header says."""
    from pathlib import Path
    from tools.gpu_check import sources
    path = Path("tests/gpu_regressions/match_after_divergent_loop_s9300296.ptx")
    monkeypatch.setattr(sources, "FUZZ_FILES", [path])
    assert sources.keys("fuzzfile") == [path.stem]
    launch = sources.launch("fuzzfile", path.stem)
    assert launch.corpus == "fuzzfile" and launch.block == [16, 4, 1] and launch.kernel == "fuzz_kernel"
    assert "match.any.sync.b64" in launch.ptx and launch.ptx_path.is_file()
    assert {o["buffer"] for o in launch.outputs} == {"out", "atom"}


def test_nop_variant_replaces_only_the_named_instructions():
    """`nop_I_J`: instructions I and J become NOP with their own control fields; the others
    keep every bit (a bisection drops a YIELD or a WARPSYNC this way)."""
    from ptx2sass.encoder import codec
    from tools.gpu_check.variants import rewrite, text_sections, transform
    ptx = ".version 8.5\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n" \
          ".reg .b32 %r<3>;\n.reg .b64 %d;\nld.param.u64 %d, [p];\nmov.u32 %r1, %tid.x;\n" \
          "add.u32 %r2, %r1, 7;\nst.global.u32 [%d], %r2;\nret;\n}\n"
    from ptx2sass.compiler import compile as compile_ptx
    cubin = compile_ptx(ptx, "sm_90")
    new = rewrite(cubin, "sm_90", transform("nop_1_3", "sm_90"))
    index = 0
    for _name, offset, size in text_sections(cubin):
        for at in range(offset, offset + size, 16):
            old = int.from_bytes(cubin[at:at + 16], "little")
            word = int.from_bytes(new[at:at + 16], "little")
            if index in (1, 3):
                assert codec.decode_text(word, "sm_90") == "NOP"
                assert word >> 105 == old >> 105
            else:
                assert word == old
            index += 1
    assert index > 3


def test_wait_range_variant_sets_only_the_wait_mask_of_its_range():
    """`waitin_A_B`: instructions A..B-1 wait on all six scoreboards, nothing else changes;
    `waitout_A_B` the others."""
    from tools.gpu_check.variants import WAIT, rewrite, text_sections, transform
    from ptx2sass.compiler import compile as compile_ptx
    ptx = ".version 8.5\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n" \
          ".reg .b32 %r<3>;\n.reg .b64 %d;\nld.param.u64 %d, [p];\nmov.u32 %r1, %tid.x;\n" \
          "add.u32 %r2, %r1, 7;\nst.global.u32 [%d], %r2;\nret;\n}\n"
    cubin = compile_ptx(ptx, "sm_90")
    for name, inside in (("waitin_1_3", True), ("waitout_1_3", False)):
        new = rewrite(cubin, "sm_90", transform(name, "sm_90"))
        index = 0
        for _name, offset, size in text_sections(cubin):
            for at in range(offset, offset + size, 16):
                old = int.from_bytes(cubin[at:at + 16], "little")
                word = int.from_bytes(new[at:at + 16], "little")
                if (1 <= index < 3) == inside:
                    assert word == old | (WAIT << 105)
                else:
                    assert word == old
                index += 1


def test_wgmma_corpus_is_prepared_for_sm90a_only_in_an_sm90_bundle(tmp_path):
    """`--corpus wgmma` (tools/wgmma_kloop.py's GEMM mainloops on sm_90a's HGMMA): in an
    sm_90 bundle both cubins are built for sm_90a and give NumPy's D in the emulator; for
    another arch the launch is skipped, not built (a wgmma cubin loads only on sm_90); `run`
    without a GPU skips it cleanly."""
    from tools.gpu_check import sources
    from tools.gpu_check.prepare import prepare_launch
    key = sources.keys("wgmma")[0]
    launch = sources.launch("wgmma", key)
    assert launch.arch == "sm_90a" and ".target sm_90a" in launch.ptx and launch.expected is not None
    assert "needs sm_90a" in prepare_launch(("wgmma", key, "sm_89", 16384))["skip"]
    record = prepare_launch(("wgmma", key, "sm_90", 16384))
    assert "skip" not in record
    for variant in ("ptxas", "ours"):
        assert record["cubins"][variant]["status"] == "ok", record["cubins"][variant]
        assert record["emu"][variant]["reference"]["verdict"] in ("same", "pass"), record["emu"][variant]
    out = tmp_path / "bundle"
    subprocess.run([sys.executable, "-m", "tools.gpu_check", "prepare", "--arch", "sm_90", "--out", str(out),
                    "--corpus", "wgmma", "--limit", "1", "--calibration", "none", "--no-tinygrad",
                    "--no-wheels"], cwd=REPO, check=True, capture_output=True, text=True)
    run, report = _run(out, tmp_path, "--device", "cuda")
    if not _has_gpu():                       # the CI case
        assert run.returncode == NO_GPU, run.stderr[-1000:]
        assert json.loads(report.read_text())["status"] == "skipped"


@pytest.mark.parametrize("name, stem, flag", [
    ("ublk_read_sb", "ublkcp_ur_late_read_s9500785", "no read scoreboard"),
    ("bar_red_stall", "bar_red_b2r_s9500528", "a barrier's result")])
def test_rule_variants_clear_the_hazard_of_a_rejected_cubin(name, stem, flag):
    """`ublk_read_sb` / `bar_red_stall` apply one rule (uniform_late_readers' UBLK*, the B2R
    distance after BAR.RED) to a cubin built without it, changing control fields only: the
    H200-rejected cubin (tests/gpu_regressions) is flagged for that rule, its variant is not."""
    from pathlib import Path
    from ptx2sass.fuzz.inputs import read_case
    from ptx2sass.fuzz.runner import execute, load
    from tools.gpu_check.variants import rewrite, text_sections, transform
    here = Path(__file__).resolve().parent / "gpu_regressions"
    case = read_case((here / f"{stem}.ptx").read_text())
    cubin = (here / f"{stem}.h200-rejected.cubin").read_bytes()
    new = rewrite(cubin, "sm_90", transform(name, "sm_90"))
    for _name, offset, size in text_sections(cubin):
        for at in range(offset, offset + size, 16):
            old, word = (int.from_bytes(c[at:at + 16], "little") for c in (cubin, new))
            assert old & ((1 << 105) - 1) == word & ((1 << 105) - 1)
    before = execute(load(cubin, case.kernel), case, hazard_check=True)
    after = execute(load(new, case.kernel), case, hazard_check=True)
    # the rule's own findings (other rules the cubin predates, e.g. SYNCS.EXCH's late read,
    # may flag it too and are no concern of the variant)
    mine = _rule_findings(cubin, name)
    assert any(flag in str(h) and mine(str(h)) for h in before.hazards)
    assert not any(flag in str(h) and mine(str(h)) for h in after.hazards)
    assert after.buffers["out"] == before.buffers["out"]


def _rule_findings(cubin: bytes, name: str):
    """Whether a hazard's text is about the instruction a rule variant changes: a UBLK*'s
    late read (`ublk_read_sb`), any (`bar_red_stall`, whose flag names B2R itself)."""
    if name != "ublk_read_sb":
        return lambda text: True
    from ptx2sass.encoder import codec
    from tools.gpu_check.variants import text_sections
    offsets = set()
    for _name, offset, size in text_sections(cubin):
        for at in range(offset, offset + size, 16):
            try:
                op = codec.decode(int.from_bytes(cubin[at:at + 16], "little"), "sm_90").opcode
            except Exception:  # noqa: BLE001 - padding
                continue
            if op.startswith("UBLK"):
                offsets.add(f"0x{at - offset:04x}")
    return lambda text: any(f"load at {o} " in text for o in offsets)


def test_emu_agreement_holds_the_emulator_to_what_the_gpu_wrote(bundle, tmp_path):
    """tools.gpu_emu_agreement on a run where the emulator stood in for the GPU: where the
    stand-in wrote the emulator's bits every launch agrees; a launch whose ptxas output was
    corrupted on its way back (the 'GPU' wrote other bits) is counted as differing; a launch
    passed within tolerance is held to the report's SHA-256 prefix, so a wrong prefix differs."""
    from tools.gpu_emu_agreement import agreement
    victim = Bundle(bundle).launches[2]["id"]
    run, report = _run(bundle, tmp_path, "--device", "emulator", "--stages", "launches",
                       env={"GPU_CHECK_FAKE": f"corrupt:{victim}:ptxas"})
    assert run.returncode == 0, run.stderr[-2000:]
    run_dir = report.parent
    (run_dir / "bundle").symlink_to(bundle, target_is_directory=True)
    result = agreement(run_dir, None, "ptxas", None)
    assert result["launches"] == 4, result
    assert result["rows"][victim].startswith("differs in "), result
    assert result["same"] == 3, result

    doc = json.loads(report.read_text())
    other = next(e for e in doc["launches"] if e["id"] != victim)
    gpu = other["ptxas"]["gpu"]
    gpu["emulator"]["verdict"] = "pass"
    assert agreement(run_dir, None, "ptxas", None)["rows"][other["id"]] == "same"  # report not yet rewritten
    report.write_text(json.dumps(doc))
    assert agreement(run_dir, None, "ptxas", None)["rows"][other["id"]] == "same"  # the true prefix
    gpu["sha"] = {n: "0" * 16 for n in gpu["sha"]}
    report.write_text(json.dumps(doc))
    assert agreement(run_dir, None, "ptxas", None)["rows"][other["id"]].startswith("differs in ")


def test_emulator_device_passes_a_by_value_aggregate_parameter():
    """Fuzz launches pass structs by value as hex ("bytes"); the emulator standing in for the
    GPU (gpu_check run, tools.gpu_emu_agreement) must give the kernel those bytes, as the
    CUDA device does (it faulted with 'string argument without an encoding')."""
    from tools.gpu_check.device import Buffer, EmuDevice
    ptx = """.version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .align 8 .b8 s[16])
{
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [s+8];
  cvta.to.global.u64 %rd3, %rd1;
  st.global.u64 [%rd3], %rd2;
  ret;
}
"""
    device = EmuDevice("sm_89")
    fn, _ = device.function(device.load(ptx.encode(), is_ptx=True), "k")
    value = bytes(range(16))
    got = device.run(fn, [1, 1, 1], [1, 1, 1], 0, [Buffer("out", 8)],
                     [{"buffer": "out"}, {"type": "bytes", "value": value.hex(), "bytes": value.hex()}],
                     ["out"]).outputs
    assert got["out"] == value[8:]
