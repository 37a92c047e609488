"""The pinned NVIDIA tools are found inside the environment, run, and are cached."""
import os
from pathlib import Path

import pytest

from ptx2sass import oracle

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "vecadd.ptx"


@pytest.mark.parametrize("tool", oracle.TOOLS)
def test_tool_is_pinned_release_inside_the_environment(tool):
    path = oracle.tool_path(tool)
    assert "site-packages" in path.parts, path  # never a system-wide CUDA install
    assert oracle.tool_version(tool) == oracle.PINNED_RELEASE


def test_unknown_tool_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown oracle tool"):
        oracle.tool_path("nvlinkz")


def test_ptxas_compiles_example_and_nvdisasm_reads_it():
    run = oracle.ptxas(EXAMPLE.read_text(), "sm_89", ("-v",), name="vecadd.ptx")
    assert run.ok, run.stderr
    assert run.output[:4] == b"\x7fELF"
    assert "Used " in run.stderr + run.stdout
    listing = oracle.nvdisasm(run.output)
    assert "FADD" in listing and "EXIT" in listing
    assert ".nv.info.vecadd" in oracle.cuobjdump_elf(run.output)


def test_ptxas_rejection_reports_file_and_line():
    bad = EXAMPLE.read_text().replace("add.f32", "add.f99")
    run = oracle.ptxas(bad, name="bad.ptx")
    assert not run.ok and run.output is None
    assert "bad.ptx, line" in run.stderr and "error" in run.stderr


def test_results_are_cached_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("PTX2SASS_CACHE", str(tmp_path))
    first = oracle.ptxas(EXAMPLE.read_text())
    entries = list(tmp_path.rglob("*.json"))
    assert len(entries) == 1
    # A cached answer is served from disk: corrupting the tool path cannot affect it.
    monkeypatch.setattr(oracle, "tool_path", lambda name: Path("/nonexistent") / name)
    assert oracle.ptxas(EXAMPLE.read_text()).output == first.output


def test_raw_words_disassemble():
    # ISETP.GE.AND P0, PT, R6, c[0x0][0x178], PT from ISA-NOTES (low, high 64-bit halves).
    word = (0x00005E0006007A0C).to_bytes(8, "little") + (0x000FDA0003F06270).to_bytes(8, "little")
    run = oracle.nvdisasm_raw(word, "sm_89")
    assert run.ok, run.stderr
    assert "ISETP.GE.AND P0, PT, R6, c[0x0][0x178], PT" in run.stdout
