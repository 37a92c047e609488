"""`--seeds` takes what tools/fuzz_emu_fail takes: ranges, single seeds and lists of them."""
from ptx2sass.fuzz.campaign import parse_seeds


def test_a_range_excludes_its_end():
    assert parse_seeds("5:8") == [5, 6, 7]


def test_a_single_seed():
    assert parse_seeds("28000013") == [28000013]


def test_a_list_of_seeds_and_ranges_keeps_its_order():
    assert parse_seeds("9,3:5, 1") == [9, 3, 4, 1]
