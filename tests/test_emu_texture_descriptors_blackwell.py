"""txq/suq descriptor-field queries (`txq.num_mipmap_levels`, `suq.channel_data_type`, ...) on
sm_100/sm_120: the driver's descriptor tables at c[0x0][0x150] (textures) and 0x160
(surfaces), read off ptxas 13.5's code (were refused: '`txq.num_mipmap_levels` on sm_100 not
supported yet'). The tests of tests/test_emu_texture.py: ptxas's cubin and ours for the arch
against that file's NumPy model."""
from __future__ import annotations

import pytest

import tests.test_emu_texture as base
from tests.test_emu_texture import test_suq_descriptor_fields, test_txq_descriptor_fields  # noqa: F401


@pytest.fixture(autouse=True, params=["sm_100", "sm_120"])
def arch(request, monkeypatch):
    monkeypatch.setattr(base, "ARCH", request.param)
    cubins = base.cubins          # the kernels' PTX 8.5 predates sm_100/sm_120
    monkeypatch.setattr(base, "cubins", lambda ptx: cubins(ptx.replace(".version 8.5", ".version 8.8")))
    return request.param
