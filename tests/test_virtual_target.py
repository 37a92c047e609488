"""`.target compute_NN` (a virtual architecture in the PTX header) as ptxas 13.5.37 takes it:
as `.target sm_NN` in every verdict (known names, -arch too low or of another family, PTX
version too old, per-target features and option notes) with the name spelled as written in
the messages that quote the `.target`, and the same cubin as `.target sm_NN` (ptxas's are
byte-identical; the test checks that on ptxas's own cubins first). We said "Unsupported
.target" for every `compute_` name."""
import io
import re

import pytest
from elftools.elf.elffile import ELFFile

from ptx2sass import cli, oracle

ENTRY = """.visible .entry k(.param .u64 p)
{{ .reg .u32 %r<4>; .reg .b64 %rd<3>; .reg .f64 %d<3>; .reg .f32 %f<3>; .reg .b16 %h<3>;
  ld.param.u64 %rd1, [p]; ld.global.f64 %d1, [%rd1]; add.f64 %d2, %d1, %d1;
  {body}
  st.global.f64 [%rd1], %d2; ret; }}
"""


def _ptx(target: str, version: str = "8.8", body: str = "") -> str:
    return f".version {version}\n.target {target}\n.address_size 64\n" + ENTRY.format(body=body)


# (.target, .version, body, -arch, extra options)
CASES = [
    *((t, "8.8", "", a, ()) for t in ("compute_89", "compute_80", "compute_75", "compute_52",
                                      "compute_30", "compute_90", "compute_100", "compute_120f")
      for a in ("sm_75", "sm_89", "sm_90")),
    # (-arch against an arch-specific `.target`: ptxas ends without its closing line, on
    # `.target sm_90a` too; ours added it)
    ("compute_90a", "8.8", "", "sm_90", ()), ("compute_90a", "8.8", "", "sm_90a", ()),
    ("sm_90a", "8.8", "", "sm_90", ()), ("sm_90a", "8.8", "", "sm_100", ()),
    ("sm_100f", "8.8", "", "sm_120", ()), ("compute_90a", "8.8", "", "sm_120", ()),
    ("compute_100f", "8.8", "", "sm_103", ()), ("compute_100f", "8.8", "", "sm_120", ()),
    ("compute_100a", "8.8", "", "sm_103", ()),
    # names ptxas does not know
    ("compute_99", "8.8", "", "sm_89", ()), ("compute_91", "8.8", "", "sm_89", ()),
    ("compute_89a", "8.8", "", "sm_89", ()), ("compute_foo", "8.8", "", "sm_89", ()),
    ("compute_", "8.8", "", "sm_89", ()),
    # the PTX version a target needs
    ("compute_89", "7.0", "", "sm_89", ()), ("compute_89", "7.8", "", "sm_89", ()),
    # features of a target, and the messages that name it
    ("compute_89", "8.0", "mov.u32 %r1, %clusterid.x;", "sm_90", ()),
    ("compute_90", "8.0", "mov.u32 %r1, %clusterid.x;", "sm_90", ()),
    ("compute_90", "8.0", "setmaxnreg.inc.sync.aligned.u32 64;", "sm_90", ()),
    ("compute_100", "8.8", "redux.sync.min.f32 %f1, %f2, 0xffffffff;", "sm_100", ()),
    ("compute_100a", "8.8", "redux.sync.min.f32 %f1, %f2, 0xffffffff;", "sm_100a", ()),
    ("compute_80", "8.0", "cvt.rn.satfinite.e4m3x2.f32 %h1, %f1, %f2;", "sm_89", ()),
    ("compute_75", "8.0", "redux.sync.add.u32 %r1, %r1, 0xffffffff;", "sm_89", ()),
    ("compute_89", "8.0", "", "sm_89", ("--g-tensor-memory-access-check",)),
    # (tensor-memory checks: arch-specific targets from sm_100 to sm_119 only, `.target
    # sm_100` too; ours took every target in that range)
    ("compute_100", "8.8", "", "sm_100", ("--g-tensor-memory-access-check",)),
    ("sm_100", "8.8", "", "sm_100", ("--gno-tensor-memory-access-check",)),
    ("compute_100a", "8.8", "", "sm_100a", ("--g-tensor-memory-access-check",)),
    ("sm_110f", "9.0", "", "sm_110f", ("--g-tensor-memory-access-check",)),
    ("sm_121f", "9.0", "", "sm_121f", ("--g-tensor-memory-access-check",)),
    ("compute_89", "8.0", "", "sm_89", ("--gno-fabric-access-check",)),
    # (map_f64_to_f32 is an error from SM 1.3 on; ours took it anywhere)
    ("compute_89, map_f64_to_f32", "8.0", "", "sm_89", ()),
    ("sm_89, map_f64_to_f32", "8.0", "", "sm_89", ()),
    ("sm_13, map_f64_to_f32", "8.0", "", "sm_89", ()),
    ("compute_12, map_f64_to_f32", "8.0", "", "sm_89", ()),
    ("compute_89, texmode_independent", "8.0", "", "sm_89", ()),
    ("compute_89", "8.0", "", "sm_89", ("-c",)),
    ("compute_89", "8.0", "", "sm_89", ("-lineinfo",)),
    ("compute_75", "8.0", "", "sm_89", ("-v",)),
]


def _run_both(ptx: str, argv: list[str], tmp_path, capsys, monkeypatch):
    theirs = oracle._run_cached("ptxas", argv + ["k.ptx", "-o", "k.cubin"], {"k.ptx": ptx.encode()},
                                "k.cubin")
    (tmp_path / "k.ptx").write_text(ptx)
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    rc = cli.main(argv + ["k.ptx", "-o", "k.cubin"])
    err = _timeless(capsys.readouterr().err.replace("ptx2sass ", "ptxas "))
    out = tmp_path / "k.cubin"
    ours = out.read_bytes() if out.is_file() else None
    if ours is not None:
        out.unlink()
    return theirs, (rc, err, ours)


def _timeless(stderr: str) -> str:
    return re.sub(r"Compile time = [0-9.]+ ms", "Compile time = ? ms", stderr)


def _cuinfo(cubin: bytes) -> tuple:
    """The ELF flags and `.note.nv.cuinfo` (which records the PTX's target)."""
    elf = ELFFile(io.BytesIO(cubin))
    note = elf.get_section_by_name(".note.nv.cuinfo")
    return elf["e_flags"], note.data() if note is not None else None


@pytest.mark.parametrize("target, version, body, arch, options", CASES,
                         ids=[f"{t}-{v}-{a}-{b[:12]}-{''.join(o)}" for t, v, b, a, o in CASES])
def test_virtual_target_as_ptxas(target, version, body, arch, options, tmp_path, capsys,
                                 monkeypatch):
    argv = [f"-arch={arch}", *options]
    theirs, (rc, err, ours) = _run_both(_ptx(target, version, body), argv, tmp_path, capsys,
                                        monkeypatch)
    assert (rc, err) == (theirs.returncode, _timeless(theirs.stderr))
    assert (ours is None) == (theirs.output is None)
    if ours is None or not target.startswith("compute_"):
        return
    assert _cuinfo(ours) == _cuinfo(theirs.output)
    # ptxas writes the cubin of `.target sm_NN`; so must we
    real = _ptx(target.replace("compute_", "sm_", 1), version, body)
    theirs_real, (_, _, ours_real) = _run_both(real, argv, tmp_path, capsys, monkeypatch)
    if "-lineinfo" not in options:     # (-lineinfo's tables hold the PTX text's line lengths)
        assert theirs_real.output == theirs.output
        assert ours_real == ours
