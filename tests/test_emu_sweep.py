"""tools/emu_sweep.py: ptxas's cubins of the corpora (and of any folder of PTX programs, such
as a fuzz campaign's) decoded by our codec and run with the hazard checker. The full sweep
(`py -m tools.emu_sweep`) is a benchmark-sized run; here a few launches per source, and
the folder mode on programs written for the test."""
from __future__ import annotations

import json

from tools import emu_sweep

ADD = """.version 8.0
.target sm_89
.address_size 64
.visible .entry add(.param .u64 a, .param .u32 n)
{
.reg .b64 %rd<3>; .reg .b32 %r<4>;
ld.param.u64 %rd1, [a]; ld.param.u32 %r1, [n];
mov.u32 %r2, %tid.x; mul.wide.u32 %rd2, %r2, 4; add.s64 %rd1, %rd1, %rd2;
ld.global.u32 %r3, [%rd1]; add.u32 %r3, %r3, %r1; st.global.u32 [%rd1], %r3;
ret;
}
"""


def test_a_few_launches_of_each_corpus_are_ok():
    outcomes = emu_sweep.sweep(("zluda", "llvm", "operand_kinds"), limit=2)
    bad = [(o.name, o.status, o.detail) for o in outcomes if o.status not in ("ok", "skipped")]
    assert not bad
    assert len(outcomes) >= 6


def test_a_folder_of_programs_with_and_without_launch_files(tmp_path):
    """Programs run with their LAUNCH.json, or on default buffers; a fault and a clean run
    are told apart."""
    (tmp_path / "add.ptx").write_text(ADD)
    (tmp_path / "bad.ptx").write_text(ADD.replace("add(", "bad(").replace("%r2, 4;", "%r2, 0x100000;"))
    (tmp_path / "add.json").write_text(json.dumps({
        "kernel": "add", "grid": [1, 1, 1], "block": [32, 1, 1],
        "buffers": {"a": {"size": 128, "fill": 1}}, "params": [{"buffer": "a"}, {"type": "u32", "value": 5}]}))
    outcomes = {o.name: o for o in emu_sweep.sweep((), [tmp_path])}
    assert outcomes["add.ptx:add"].status == "ok"
    assert outcomes["bad.ptx:bad"].status == "fault"       # 1 MiB strides leave the 64 KiB buffer
