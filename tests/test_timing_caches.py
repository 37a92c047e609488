"""The timing model's set-associative LRU cache."""
from ptx2sass.emu.timing.caches import Cache


def test_lru_within_a_set():
    c = Cache(size_bytes=4 * 128, line=128, ways=2)      # 2 sets of 2 ways
    assert c.sets == 2
    assert not c.lookup(0) and not c.lookup(2)            # both map to set 0
    assert c.lookup(0)                                    # 0 is now most recent
    assert not c.lookup(4)                                # evicts 2, the least recent
    assert c.lookup(0) and not c.lookup(2)
    assert not c.lookup(1) and c.lookup(1)                # set 1 is independent
    assert (c.hits, c.misses) == (3, 5)


def test_invalidate_and_no_allocate():
    c = Cache(size_bytes=8 * 128, line=128, ways=8)
    assert not c.lookup(5, allocate=False) and not c.lookup(5)
    assert c.lookup(5)
    c.invalidate(5)
    assert not c.lookup(5)
