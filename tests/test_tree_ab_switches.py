"""tools.tree_ab's `--set` reaches the module the compiler reads: `sched.x` imported alone is a
second copy of the file that codegen never consults (two helpers' A/Bs compared a tree with
itself that way), so a bare `sched.`/`emu.`/`isel.` name is taken as the `ptx2sass.` one."""
import ptx2sass.sched.pre_schedule as pre_schedule
from tools import tree_ab


def test_set_flips_the_switch_codegen_reads(tmp_path, monkeypatch):
    monkeypatch.setattr(pre_schedule, "SOURCE_SLACK", pre_schedule.SOURCE_SLACK)
    assert pre_schedule.SOURCE_SLACK != 0
    names = tmp_path / "names.txt"
    names.write_text("")
    tree_ab.main(["measure", "zluda", str(names), str(tmp_path / "out.jsonl"),
                  "--set", "sched.pre_schedule:SOURCE_SLACK=0"])
    assert pre_schedule.SOURCE_SLACK == 0
