"""`linear_bits` on a two's complement field (weights 2^s .. 2^(s+n-2), -2^(s+n-1)) takes
the digits directly instead of searching both signs greedily over every weight (~60 steps
a signed immediate, every encoding): the answers must be the search's, value by value."""
from __future__ import annotations

import random

from ptx2sass.encoder import codec


def _fields():
    """Every distinct (weights, bias) of the sm_89 and sm_90 tables' operand fields, with
    each field's signed reading (`signed_variant`) where it has one."""
    seen = {}
    for arch in ("sm_89", "sm_90"):
        for form in codec.table_for(arch).forms:
            for slot in form.slots:
                for f in slot["fields"]:
                    if "weights" not in f or "float" in f:
                        continue
                    variants = [f]
                    if "signed_by" in f:
                        group, values = f["signed_by"]
                        variants.append(codec.signed_variant(f, {group: values[0]}))
                    for v in variants:
                        seen.setdefault((tuple(v["weights"]), v.get("bias", 0)), v)
    return list(seen.values())


def _search(value: int, field: dict):
    weights = field["weights"]
    negs, pos, _, _ = codec._weight_plan(tuple(weights))
    return codec._search_bits(value - field["bias"], weights, negs, pos)


def test_signed_fields_answer_as_the_search():
    rng = random.Random(3)
    fields = _fields()
    signed = [f for f in fields if codec._weight_plan(tuple(f["weights"]))[3] is not None]
    assert len(signed) >= 5, len(signed)      # the tables do hold such fields
    for f in signed:
        w = f["weights"]
        top = -w[-1]
        edges = [0, 1, -1, top, top - 1, -top, -top - 1, w[0], -w[0], 2 * top, -2 * top, 3]
        values = edges + [rng.randrange(-2 * top, 2 * top) for _ in range(300)]
        for v in values:
            v += f["bias"]
            assert codec.linear_bits(v, f) == _search(v, f), (f["weights"], v)


def test_shapes_the_plan_tells_apart():
    """Weights out of order, with a gap, or a negative weight below the top go to the
    search; the search and the digits agree on the pattern (with and without a shift)."""
    plain = (1, 2, 4, -8)
    assert codec._weight_plan(plain)[3] == 0
    assert codec._weight_plan((4, 8, -16))[3] == 2
    assert codec._weight_plan((-1,))[3] == 0
    for odd in ((2, 1, -4), (1, 4, -8), (-1, 2, 4), (1, 2, 8, -16), (1, 2, 4, 8)):
        assert codec._weight_plan(odd)[3] is None, odd
    for weights in (plain, (4, 8, -16), (-1,), (2, 4, 8, 16, -32)):
        f = {"weights": list(weights), "bias": 0}
        for v in range(-80, 80):
            assert codec.linear_bits(v, f) == _search(v, f), (weights, v)
