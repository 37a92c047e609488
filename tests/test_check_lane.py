"""The checks' plain lane (frontend/checks.py `Checker.lane_plan` / `in_lane`): unguarded
instructions of plain registers and literals skip `check_instruction` when it would report
nothing, and the diagnostics stay those of the general path (the lane turned off)."""
import pytest

from ptx2sass import frontend
from ptx2sass.frontend import checks

HEADER = ".version 8.0\n.target sm_89\n.address_size 64\n"


def _kernel(body: str, regs: str = ".reg .u32 %r<4>;\n.reg .f32 %f<2>;\n.reg .pred %p<2>;\n"
            ".reg .u64 %rd<2>;\n.reg .b16 %h<2>;\n") -> str:
    return HEADER + ".visible .entry k(.param .u64 p)\n{\n" + regs + body + "ret;\n}\n"


def _diagnostics(text: str, lane: bool, monkeypatch) -> list[tuple]:
    with monkeypatch.context() as m:
        if not lane:
            m.setattr(checks.Checker, "lane_plan", lambda self, ins: False)
        return [(d.severity, d.message, d.line, d.column)
                for d in checks.run_checks(frontend.parse(text, "t.ptx"), "sm_89")]


def test_plain_statements_skip_the_general_path(monkeypatch):
    calls = []
    general = checks.Checker.check_instruction
    monkeypatch.setattr(checks.Checker, "check_instruction",
                        lambda self, ins, scope: calls.append(ins.opcode) or general(self, ins, scope))
    text = _kernel("mov.u32 %r1, 0;\n" + "add.u32 %r1, %r1, 3;\n" * 200
                   + "xor.b32 %r2, %r1, %r1;\n" * 50)
    assert checks.run_checks(frontend.parse(text, "t.ptx"), "sm_89") == []
    assert calls == []              # every statement took the lane


CASES = {
    "mismatched register type": "add.u32 %r1, %f1, 3;\n",
    "mismatched result": "add.u32 %f1, %r1, %r2;\n",
    "16-bit register in a 32-bit add": "add.u32 %r1, %h1, %r2;\n",
    "float register in a float literal's place": "add.f32 %f1, %f1, %r1;\n",
    "overflowing literal": "add.u32 %r1, %r1, 99999999999999999999999;\n",
    "unknown register": "add.u32 %r1, %r9, 1;\n",
    "sink result": "add.u32 _, %r1, 1;\n",
    "newer special register": "mov.u32 %r1, %clusterid.x;\nmov.u32 %r1, %reserved_smem_offset_begin;\n",
    "guarded": "@%p1 add.u32 %r1, %r1, 1;\n@%r1 add.u32 %r1, %r1, 1;\n",
    "integer comparison mismatch": "setp.lo.s32 %p1, %r1, %r2;\n",
    "min of three": "min.f32 %f1, %f1, %f1, %f1;\n",
    "feature of a newer version": "add.u32 %r1, %r1, 1;\nadd.u32 %r1, %r1, 1;\n",
    "double-width destination": "mul.wide.u32 %r1, %r1, %r2;\n",
    "lane and general interleaved": "add.u32 %r1, %r1, 1;\nadd.u32 %r1, %f1, 1;\nadd.u32 %r1, %r1, 1;\n"
                                    "add.u32 %r1, %r1, %r9;\nadd.u32 %r1, %r1, 1;\n",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_lane_reports_as_the_general_path(name, monkeypatch):
    text = _kernel(CASES[name])
    if name == "feature of a newer version":     # lop3's boolean form needs PTX 8.2
        text = text.replace("add.u32 %r1, %r1, 1;\n", "lop3.or.b32 %r1, %r1, %r2, %r3, 0xfe, %p1;\n", 1)
    try:
        with_lane = _diagnostics(text, True, monkeypatch)
    except Exception as err:         # a fatal diagnostic: the same one without the lane
        with pytest.raises(type(err), match=None):
            _diagnostics(text, False, monkeypatch)
        return
    assert with_lane == _diagnostics(text, False, monkeypatch)
    assert with_lane, "each case has something to report"
