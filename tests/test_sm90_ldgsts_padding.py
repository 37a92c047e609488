"""sm_90: three predicated-off LDS before the first LDGSTS after the entry or a BAR
(hopper.json `ldgsts_padding`, sched/ldgsts_pad.py). ptxas pads every Triton cp.async matmul
so; the H200 (docs/gpu/2026-11-26-h200-sm90-run2.md) returned only the first K-stage's product
for our cubins without it (triton matmul_f16, matmul_int8). The emulator's hazard check must
flag the unpadded cubin, and ptxas's and ours must be clean and right."""
import copy

import pytest

from ptx2sass import codegen
from ptx2sass.sched.latency import model_for
from tests import triton_corpus

KERNELS = ["matmul_f16.ptx", "matmul_int8.ptx"]


def _entry(name):
    return next(e for e in triton_corpus.manifest() if e["file"] == name)


def _ours(name, padded: bool) -> bytes:
    import ptx2sass
    ptx = open(f"tests/corpus/triton/{name}").read()
    if padded:
        return ptx2sass.compile(ptx, "sm_90", name)
    real = codegen.pad_ldgsts

    def unpadded(slots, lat):
        lat = copy.copy(lat)
        lat.LDGSTS_PADDING = (0, frozenset())
        return real(slots, lat)
    codegen.pad_ldgsts = unpadded
    try:
        return ptx2sass.compile(ptx, "sm_90", name)
    finally:
        codegen.pad_ldgsts = real


def _padding_hazards(result):
    return [str(h) for h in result.hazards if "ldgsts_padding" in str(h)]


def test_tables():
    assert model_for("sm_90").LDGSTS_PADDING == (3, frozenset({"BAR"}))
    assert model_for("sm_89").LDGSTS_PADDING[0] == 0       # sm_89 output unchanged


@pytest.mark.parametrize("name", KERNELS)
def test_ptxas_cubin_is_padded(name):
    from ptx2sass import oracle
    build = oracle.ptxas(open(f"tests/corpus/triton/{name}").read(), "sm_90", name=name)
    assert build.ok
    result, _ = triton_corpus.launch(_entry(name), build.output)
    assert not _padding_hazards(result)


@pytest.mark.parametrize("name", KERNELS)
def test_emulator_flags_unpadded_ldgsts(name):
    result, _ = triton_corpus.launch(_entry(name), _ours(name, padded=False))
    assert _padding_hazards(result)


@pytest.mark.parametrize("name", KERNELS)
def test_our_cubin_is_padded_and_right(name):
    entry = _entry(name)
    result, data = triton_corpus.launch(entry, _ours(name, padded=True))
    assert not result.hazards, [str(h) for h in result.hazards[:3]]
    assert triton_corpus.check_reference(entry, data) == []     # `launch` wrote the outputs into `data`
