"""The parser's tree says what the PTX text means (PTX ISA semantics of each construct),
and the parser tables are generated once and reused."""
import subprocess
import sys
from pathlib import Path

import pytest

from frontend_cases import CASES, HEADER
from ptx2sass import CompileError
from ptx2sass.frontend import ast, parse

REPO = Path(__file__).resolve().parent.parent


def body_of(text: str) -> list:
    module = parse(HEADER + ".visible .entry k(.param .u64 p)\n{\n" + text + "\n}\n", "t.ptx")
    return module.entries()[0].body.statements


def only_instruction(text: str) -> ast.Instruction:
    (ins,) = [s for s in body_of(text) if isinstance(s, ast.Instruction)]
    return ins


def test_opcode_modifiers_and_position():
    ins = only_instruction("    ld.global.nc.v4.f32 {%f1, _, %f3, %f4}, [%rd1+-16];")
    assert (ins.opcode, ins.modifiers) == ("ld", (".global", ".nc", ".v4", ".f32"))
    assert (ins.line, ins.column) == (6, 5)
    vec, addr = ins.operands
    assert [e.name for e in vec.elements] == ["%f1", "_", "%f3", "%f4"]
    assert addr.base.name == "%rd1" and addr.offset == -16


@pytest.mark.parametrize("text,value", [("42", 42), ("0x2A", 42), ("052", 42), ("0b101010", 42),
                                        ("42U", 42), ("0xffffffffffffffff", 2**64 - 1)])
def test_integer_literals(text, value):
    ins = only_instruction(f"add.u32 %r1, %r2, {text};")
    assert ins.operands[2].value == value


@pytest.mark.parametrize("text,value,width", [("0f3F800000", 1.0, 32), ("0fBF000000", -0.5, 32),
                                              ("0d4000000000000000", 2.0, 64), ("1.5", 1.5, 64)])
def test_float_literals(text, value, width):
    lit = only_instruction(f"mov.f32 %f1, {text};").operands[1]
    assert lit.value == value and lit.width == width


def test_guards_pairs_and_negation():
    ins = only_instruction("@!%p1 setp.lt.and.s32 %p2|%p3, %r1, 7, !%p4;")
    assert ins.guard.negated and ins.guard.predicate.name == "%p1"
    pair = ins.operands[0]
    assert isinstance(pair, ast.PairOperand) and pair.second.name == "%p3"
    assert isinstance(ins.operands[3], ast.Unary) and ins.operands[3].op == "!"


def test_address_forms():
    ins = [s for s in body_of("ld.shared.u32 %r1, [smem+8];\nld.u32 %r1, [%rd1];\n"
                              "ld.const.u32 %r1, [256];\nld.global.u32 %r1, [%rd1-4];")]
    got = [(i.operands[1].base.name if i.operands[1].base else None, i.operands[1].offset)
           for i in ins]
    assert got == [("smem", 8), ("%rd1", 0), (None, 256), ("%rd1", -4)]


def test_special_register_components_and_labels():
    stmts = body_of("$L__BB0_1:\nmov.u32 %r1, %tid.x;\n@%p1 bra.uni $L__BB0_1;")
    assert isinstance(stmts[0], ast.Label) and stmts[0].name == "$L__BB0_1"
    src = stmts[1].operands[1]
    assert (src.name, src.component) == ("%tid", ".x")


def test_declarations():
    module = parse(HEADER + ".extern .shared .align 16 .b8 dyn[];\n"
                   ".global .align 8 .u64 ptrs[2] = {generic(g), 0};\n"
                   ".global .u32 g = 7;\n"
                   ".visible .entry k(.param .u64 .ptr .global .align 16 p, "
                   ".param .align 8 .b8 s[16])\n.maxntid 128, 1, 1\n.minnctapersm 2\n"
                   "{\n.reg .b32 %r<10>;\n.reg .v4 .f32 v;\nret;\n}\n", "t.ptx")
    dyn, ptrs, g, fn = module.items[3:]
    assert (dyn.linkage, dyn.space, dyn.align, dyn.type, dyn.declarators[0].dims) == \
        ((".extern",), ".shared", 16, ".b8", [None])
    init = ptrs.declarators[0].init
    assert isinstance(init[0], ast.Call) and init[0].function == "generic"
    assert g.declarators[0].init.value == 7
    p, s = fn.params
    assert (p.ptr_space, p.ptr_align, p.type) == (".global", 16, ".u64")
    assert (s.align, s.declarators[0].dims) == (8, [16])
    assert [(d.name, d.args) for d in fn.directives] == [(".maxntid", [128, 1, 1]),
                                                         (".minnctapersm", [2])]
    regs, vec = fn.body.statements[:2]
    assert regs.declarators[0].range_count == 10 and vec.vector == ".v4"


def test_functions_calls_and_prototypes():
    module = parse(CASES["ok_call_prototype"], "t.ptx")
    func, entry = module.functions()
    assert func.kind == ".func" and [d.declarators[0].name for d in func.return_params] == ["rv"]
    inner = entry.body.statements[3].statements
    proto = next(s for s in inner if isinstance(s, ast.CallPrototype))
    assert proto.label == "proto" and len(proto.params) == 1
    call = next(s for s in inner if isinstance(s, ast.Instruction) and s.opcode == "call")
    ret, target, args, prototype = call.operands
    assert isinstance(ret, ast.ParenList) and ret.elements[0].name == "r0"
    assert target.name == "fp" and args.elements[0].name == "a0" and prototype.name == "proto"


def test_debug_directives():
    module = parse(CASES["ok_debug_sections"], "t.ptx")
    file_dir = next(i for i in module.items if isinstance(i, ast.FileDirective))
    assert (file_dir.index, file_dir.path) == (1, "k.cu")
    locs = [s for s in module.entries()[0].body.statements if isinstance(s, ast.Loc)]
    assert locs[1].inlined_at == (1, 3, 1) and locs[1].function_name == "$L__info"
    sections = [i for i in module.items if isinstance(i, ast.Section)]
    assert [s.name for s in sections] == [".debug_str", ".debug_info"]
    assert sections[0].entries[0].label == "$L__info"


@pytest.mark.parametrize("text,line", [("add.s32 %r1, %r2,, %r3;", 6), ("}", 7),
                                       ("ld.global.u32 %r1, [%rd1;", 6)])
def test_syntax_errors_are_fatal_compile_errors(text, line):
    with pytest.raises(CompileError) as info:
        body_of(text)
    assert info.value.severity == "fatal" and info.value.line == line


def test_nul_byte_ends_the_input_as_in_ptxas():
    """ptxas stops reading at a NUL byte, even in a comment, and names only its line."""
    with pytest.raises(CompileError) as info:
        body_of("// before \0 after")
    err = info.value
    assert (err.message, err.severity, err.file, err.line) == (
        "Unexpected EOF encountered on line 6", "fatal", None, None)


def test_second_process_derives_no_tables_and_import_is_light(tmp_path):
    """A second process reads the grammar tables where the first left them (beside the
    source after `make setup`, else the cache: frontend/tables.py), writes nothing, and never
    pulls in numpy."""
    from ptx2sass import cache
    parse(HEADER)

    def snapshot():
        places = [REPO / "frontend", Path(cache.cache_dir("ply"))]
        return sorted((str(p), p.stat().st_mtime_ns) for d in places if d.is_dir()
                      for p in d.iterdir() if "tab" in p.name)
    before = snapshot()
    assert before, "the first parse left its tables somewhere"
    code = ("import sys; from ptx2sass.frontend import parse, check; "
            f"check(parse({HEADER!r} + '.visible .entry k()\\n{{\\nret;\\n}}\\n'), 'sm_89'); "
            "print('numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False" and out.stderr == ""
    assert snapshot() == before
    assert not list(REPO.glob("frontend/parser.out")) and not list(tmp_path.iterdir())
