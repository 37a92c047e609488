"""tools.gpu_mufu_capture end to end without a GPU: ptxas's sweep kernels (one MUFU each, the
sin/cos prescale patched to 1.0), `run` on the emulator stand-in, and tools.mufu_tables'
reader giving back, from the stored differences, each input's own result (the emulator's
MUFU of that input, computed here apart from the capture)."""
import numpy as np

from ptx2sass import oracle
from tools import gpu_mufu_capture, mufu_tables


def test_capture_round_trip_on_the_emulator(tmp_path):
    bundle, out = tmp_path / "bundle", tmp_path / "out"
    gpu_mufu_capture.prepare(bundle, "sm_90")
    listing = oracle.nvdisasm((bundle / "mufu_sin.cubin").read_bytes())
    assert "FMUL.RZ" in listing and "0.15915" not in listing          # the prescale is 1.0 now
    gpu_mufu_capture.main(["run", "--bundle", str(bundle), "--out", str(out), "--device", "emulator",
                           "--scale", "65536", "--select", "^(rcp_e127|sqrt_e128|ex2_e126_neg)$"])
    capture = mufu_tables.Capture(out)
    assert sorted(capture.sweeps) == ["ex2_e126_neg", "rcp_e127", "sqrt_e128"]
    from ptx2sass.emu import mufu_measured
    for name, fn in (("rcp_e127", "RCP"), ("sqrt_e128", "SQRT")):
        x, got = capture.outputs(name)
        assert len(x) == 128 and x[1] - x[0] == 1
        exact = mufu_tables.EXACT[fn.lower()](x.view(np.float32).astype(np.float64)).astype(np.float32).view(np.uint32)
        assert got.tolist() == mufu_measured.correct_f32(fn, x, exact).tolist()
    x, got = capture.outputs("ex2_e126_neg")
    assert got.tolist() == mufu_measured.ex2_f32(x).tolist()
