"""`emu.run` with cubin bytes keeps the loaded program of a cubin launched again (decoded
once, not every launch): the last one loaded, and a bounded few seen more than once."""
import numpy as np
import pytest

from test_emu_run import SAXPY      # the kernel of the run API's own tests

from ptx2sass import oracle
from ptx2sass.emu import launch
from tools.emu_testing import cubin_listing_decoder


@pytest.fixture
def fresh(monkeypatch):
    """Empty caches, and a count of the loads `run` makes."""
    monkeypatch.setattr(launch, "_PROGRAMS", {}, raising=False)
    monkeypatch.setattr(launch, "_SEEN", {}, raising=False)
    monkeypatch.setattr(launch, "_LAST", (None, None), raising=False)
    loads = []
    real = launch.load_program

    def counted(cubin, kernel=None, decoder=None):
        loads.append((bytes(cubin), kernel, decoder))
        return real(cubin, kernel, decoder)
    monkeypatch.setattr(launch, "load_program", counted)
    return loads


def test_a_cubin_launched_again_is_loaded_once(fresh):
    build = oracle.ptxas(SAXPY, "sm_89")
    assert build.ok, build.stderr
    decoder = cubin_listing_decoder(build.output)
    rng = np.random.default_rng(7)
    n = 100
    for k in range(5):
        cubin = bytes(bytearray(build.output))          # equal bytes, another object each time
        x = rng.standard_normal(n).astype(np.float32)
        y = rng.standard_normal(n).astype(np.float32)
        a = np.float32(0.5 + k)
        want = (np.float64(a) * x.astype(np.float64) + y).astype(np.float32)   # fma: one rounding
        launch.run(cubin, "saxpy", (2,), (64,), [x, y, a, np.uint32(n)], decoder=decoder,
                   hazard_check=bool(k % 2))
        assert np.array_equal(y, want), k
    assert len(fresh) == 1


def test_keys_bounds_and_first_sight(fresh, monkeypatch):
    """The last program loaded is kept; another is kept from its key's second sight; the key
    is the bytes, the kernel and the decoder; at most PROGRAM_CACHE_SIZE are kept besides
    the last, the least recently used dropped."""
    made = []
    monkeypatch.setattr(launch, "load_program", lambda c, k=None, d=None: made.append((c, k, d)) or object())
    size = launch.PROGRAM_CACHE_SIZE
    for i in range(3 * size):                         # each seen once: only the last kept
        launch._loaded(b"cubin%d" % i, "k", None)
    assert launch._PROGRAMS == {} and len(made) == 3 * size
    first = launch._loaded(b"a", "k", None)
    assert launch._loaded(b"a", "k", None) is first  # the last one: launched again, kept
    launch._loaded(b"x", "k", None)
    assert launch._loaded(b"a", "k", None) is first
    once = launch._loaded(b"c", "k", None)
    launch._loaded(b"x", "k", None)
    second = launch._loaded(b"c", "k", None)          # seen before: loaded again and kept
    assert second is not once
    launch._loaded(b"y", "k", None)
    assert launch._loaded(b"c", "k", None) is second
    dec = lambda *a: []                                # noqa: E731
    assert launch._loaded(b"a", "j", None) is not first
    assert launch._loaded(b"a", "k", dec) is not first
    for i in range(size + 2):                          # fill past the bound
        launch._loaded(b"b%d" % i, "k", None)
        launch._loaded(b"z", "k", None)
        launch._loaded(b"b%d" % i, "k", None)
    assert len(launch._PROGRAMS) == size
    assert (b"a", "k", launch.loader.codec_decoder) not in launch._PROGRAMS
    before = len(made)
    launch._loaded(b"b%d" % (size + 1), "k", None)     # most recent: still kept
    launch._loaded(b"b%d" % size, "k", None)
    assert len(made) == before


def test_the_default_decoder_is_part_of_the_key(fresh, monkeypatch):
    """A cubin kept under one default decoder is loaded again when the default changes."""
    monkeypatch.setattr(launch, "load_program", lambda c, k=None, d=None: (c, k, d))
    kept = launch._loaded(b"c", "k", None)
    assert launch._loaded(b"c", "k", None) is kept
    monkeypatch.setattr(launch.loader, "codec_decoder", lambda *a: [])
    got = launch._loaded(b"c", "k", None)
    assert got[2] is launch.loader.codec_decoder and kept[2] is not got[2]
