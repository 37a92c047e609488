"""The tinygrad PTX corpus is complete, launchable as described, and what ptxas accepts.

Expectations come from outside the harvester: the PTX text itself (entry, `.param` list,
`.maxntid`, `%tid`/`%ctaid` reads, `.shared` declarations), dtype sizes, the pinned ptxas,
and the coverage the corpus was commissioned to have (issue 2).
"""
import hashlib
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ptx2sass import oracle

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "corpus" / "tinygrad"
MANIFEST = json.loads((CORPUS / "manifest.json").read_text())
KERNELS = {k["file"]: k for k in MANIFEST["kernels"]}
FILES = sorted(KERNELS)

ITEMSIZE = {"bool": 1, "int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "int32": 4, "uint32": 4,
            "int64": 8, "uint64": 8, "float16": 2, "bfloat16": 2, "float32": 4, "float64": 8,
            "float8_e4m3": 1, "float8_e5m2": 1}
PTX_SCALAR_TYPE = {"int32": "s32", "uint32": "u32", "int64": "s64", "uint64": "u64"}
REQUIRED_CATEGORIES = ("elementwise", "reduction", "matmul", "tensor_core", "conv2d",
                       "softmax_layernorm", "transcendental", "int_divmod", "where_cast_bitcast",
                       "gather_index", "cumsum", "arange")
REQUIRED_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                   "uint64", "float16", "bfloat16", "float32", "float64")


def ptx_of(name: str) -> str:
    return (CORPUS / name).read_text()


def entry_header(ptx: str) -> tuple[list[str], list[tuple[str, str]]]:
    """Entry names and the (type, name) `.param` list of the (single) entry."""
    entries = re.findall(r"\.visible\s+\.entry\s+(\w+)\s*\(", ptx)
    head = ptx[ptx.index(".entry"):].split(")", 1)[0]
    return entries, re.findall(r"\.param\s+\.(\w+)\s+(\w+)", head)


def test_manifest_lists_exactly_the_ptx_files():
    on_disk = {p.name for p in CORPUS.glob("*.ptx")}
    assert on_disk == set(FILES)
    assert len(FILES) == len(MANIFEST["kernels"]) == MANIFEST["kernel_count"]


def test_at_least_200_distinct_kernels():
    digests = {hashlib.sha256(ptx_of(f).encode()).hexdigest() for f in FILES}
    assert len(digests) == len(FILES) >= 200


def test_pinned_tinygrad_and_target():
    assert MANIFEST["tinygrad_version"] == "0.14.0"
    assert MANIFEST["arch"] == "sm_89"


def test_program_records_are_consistent():
    seen = set()
    for prog in MANIFEST["programs"]:
        assert prog["kernels"] or prog.get("error"), f"{prog['name']} has neither kernels nor an error"
        for f in prog["kernels"]:
            assert f in KERNELS, f
            k = KERNELS[f]
            assert prog["name"] == k["program"] or prog["name"] in k["also_from"]
            seen.add(f)
    assert seen == set(FILES)
    failures = [p for p in MANIFEST["programs"] if p.get("error")]
    assert len(failures) <= 10, [p["name"] for p in failures]  # a few known tinygrad failures


def test_dtype_support_is_recorded():
    support = MANIFEST["dtypes"]
    assert "bfloat16" in support["emulated"] and "bfloat16" not in support["native"]
    assert set(REQUIRED_DTYPES) <= set(support["native"]) | set(support["emulated"])


@pytest.mark.parametrize("name", FILES)
def test_kernel_entry_is_complete(name):
    k, ptx = KERNELS[name], ptx_of(name)
    assert hashlib.sha256(ptx.encode()).hexdigest() == k["sha256"], "file differs from the harvest"
    # tinygrad's PTXCompiler fills the placeholders: sm_89 gets PTX ISA 7.8
    assert ptx.startswith(".version 7.8\n.target sm_89\n.address_size 64\n")
    assert "VERSION" not in ptx and "TARGET" not in ptx
    entries, params = entry_header(ptx)
    assert entries == [k["entry"]]
    assert [(p["ptx_type"], p["name"]) for p in k["params"]] == params
    for p in k["params"]:
        assert p["dtype"] in ITEMSIZE, p
        if p["kind"] == "buffer":
            assert p["ptx_type"] == "u64"
            assert p["count"] > 0 and p["bytes"] == p["count"] * ITEMSIZE[p["dtype"]], p
            assert p["access"] in ("in", "out", "inout", "none")
            if "storage_dtype" in p:  # emulated dtypes travel as narrower integers
                assert p["dtype"] in MANIFEST["dtypes"]["emulated"] or k["context"].get("EMULATED_DTYPES")
                assert ITEMSIZE[p["dtype"]] % ITEMSIZE[p["storage_dtype"]] == 0
        else:
            assert p["kind"] == "var"
            assert p["ptx_type"] == PTX_SCALAR_TYPE[p["dtype"]]
            assert p["min"] <= p["value"] <= p["max"]
    assert any(p["kind"] == "buffer" and p["access"] in ("out", "inout") for p in k["params"])


@pytest.mark.parametrize("name", FILES)
def test_launch_dimensions_match_the_ptx(name):
    k, ptx = KERNELS[name], ptx_of(name)
    grid, block = k["grid"], k["block"]
    assert len(grid) == len(block) == 3
    assert all(isinstance(d, int) and d > 0 for d in grid + block)
    assert math.prod(block) <= 1024 and grid[1] <= 65535 and grid[2] <= 65535
    assert int(re.search(r"^\.maxntid (\d+)$", ptx, re.M)[1]) == math.prod(block)
    # a dimension larger than one is exactly a dimension whose index the kernel reads
    for axis, letter in enumerate("xyz"):
        assert (f"%tid.{letter}" in ptx) == (block[axis] > 1), ("block", letter)
        assert (f"%ctaid.{letter}" in ptx) == (grid[axis] > 1), ("grid", letter)
    shared = sum(int(n) for n in re.findall(r"\.shared\s+\.align\s+\d+\s+\.b8\s+\w+\[(\d+)\]", ptx))
    assert k["static_shared_bytes"] == shared <= 48 * 1024
    assert k["dynamic_shared_bytes"] == 0


@pytest.mark.parametrize("name", FILES)
def test_pinned_ptxas_accepts_or_known_rejection(name):
    k = KERNELS[name]
    run = oracle.ptxas(ptx_of(name), "sm_89", name=name)
    if "ptxas_error" not in k:
        assert run.ok, run.stderr
        assert run.output[:4] == b"\x7fELF"
    else:  # tinygrad writes PTX that ptxas refuses (f64 approx transcendentals)
        assert not run.ok
        first = next(ln.strip() for ln in run.stderr.splitlines() if "error" in ln)
        assert first == k["ptxas_error"]


def test_coverage_of_the_commissioned_categories():
    categories = {c for k in KERNELS.values() for c in k["categories"]}
    assert set(REQUIRED_CATEGORIES) <= categories
    dtypes = {p["dtype"] for k in KERNELS.values() for p in k["params"] if p["kind"] == "buffer"}
    assert set(REQUIRED_DTYPES) <= dtypes
    texts = {f: ptx_of(f) for f in FILES}

    def count(rx: str, files=FILES) -> int:
        return sum(bool(re.search(rx, texts[f], re.M)) for f in files)
    matmuls = [f for f in FILES if "matmul" in KERNELS[f]["categories"]]
    assert count(r"mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.f16\.f16\.f32", matmuls) >= 1
    assert count(r"mma\.sync\.aligned\.m16n8k16\.row\.col\.f16\.f16\.f16\.f16", matmuls) >= 1
    assert count(r"mma\.sync\.aligned\.m16n8k8\.row\.col\.f32\.tf32\.tf32\.f32", matmuls) >= 1
    assert count(r"mma\.sync", matmuls) < len(matmuls)  # and matmuls without tensor cores
    assert count(r"bar\.sync") >= 10 and count(r"^\s*\.shared\s") >= 10
    assert count(r"ld\.global\.v4\.") >= 10 and count(r"st\.global\.v4\.") >= 10
    assert count(r"\bdiv\.s32\b") and count(r"\brem\.u64\b")
    for op in ("ex2.approx.f32", "lg2.approx.f32", "sin.approx.f32", "sqrt.approx.f32", "rcp.approx.f32"):
        assert count(re.escape(op)) >= 1, op
    assert any(p["kind"] == "var" for k in KERNELS.values() for p in k["params"])


def _sample_programs(n: int) -> list[str]:
    """Evenly spread programs with kernels, always including a tensor-core one."""
    progs = [p["name"] for p in MANIFEST["programs"] if p["kernels"]]
    step = max(1, len(progs) // max(1, n))
    chosen = progs[::step][:n]
    return sorted(set(chosen) | {"matmul_f16_tc"})


@pytest.mark.slow
def test_reharvest_reproduces_committed_kernels(tmp_path):
    pytest.importorskip("tinygrad")
    names = _sample_programs(int(os.environ.get("PTX2SASS_SAMPLE", "4")))
    run = subprocess.run([sys.executable, "-m", "tools.harvest_tinygrad", "--out", str(tmp_path),
                          "--only", ",".join(names), "--no-ptxas", "-q"],
                         cwd=REPO, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    fresh = json.loads((tmp_path / "manifest.json").read_text())
    by_digest = {k["sha256"]: k for k in MANIFEST["kernels"]}
    assert fresh["kernels"]
    for k in fresh["kernels"]:
        assert k["sha256"] in by_digest, f"{k['file']} is not in the committed corpus"
        committed = by_digest[k["sha256"]]
        assert (tmp_path / k["file"]).read_text() == ptx_of(committed["file"])
        for field in ("entry", "grid", "block", "params", "static_shared_bytes"):
            assert k[field] == committed[field], (k["file"], field)
