"""ptx2sass.records.dataclass behaves as `dataclasses.dataclass` for the options the project
uses: each class body is built with both and the instances compared."""
from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
from dataclasses import field

import pytest

from ptx2sass import records

OPTIONS = [{}, {"frozen": True}, {"eq": False}, {"slots": True, "kw_only": True},
           {"frozen": True, "slots": True}, {"slots": True}]


def _classes(decorate, options):
    @decorate(**options)
    class Base:
        name: str
        line: int = 0
        items: list = field(default_factory=list)

    @decorate(**options)
    class Derived(Base):
        extra: tuple = ()
        table: dict = field(default_factory=dict)

    @decorate(**options)
    class Empty:
        pass

    @decorate(**options)
    class Single:
        value: object = None
    return Base, Derived, Empty, Single


def _instances(classes):
    base, derived, empty, single = classes
    return [base(name="a"), base(name="a", line=3, items=[1]), derived(name="b", extra=(1, 2)),
            derived(name="b", table={1: 2}), empty(), single(), single(value=(1, "x")),
            single(value=[1])]


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_same_behaviour_as_the_standard_decorator(options):
    ours_cls = _classes(records.dataclass, options)
    theirs_cls = _classes(dataclasses.dataclass, options)
    for a, b in zip(ours_cls, theirs_cls):
        assert str(inspect.signature(a)) == str(inspect.signature(b))
        assert [(f.name, f.kw_only) for f in dataclasses.fields(a)] == \
            [(f.name, f.kw_only) for f in dataclasses.fields(b)]
        assert ("__slots__" in a.__dict__) == ("__slots__" in b.__dict__)
    ours, theirs = _instances(ours_cls), _instances(theirs_cls)
    for i, (x, y) in enumerate(zip(ours, theirs)):
        assert repr(x) == repr(y)
        assert dataclasses.is_dataclass(x)
        assert dataclasses.asdict(x) == dataclasses.asdict(y)
        for j, (u, v) in enumerate(zip(ours, theirs)):
            assert (x == u) == (y == v), (i, j)
            assert (x != u) == (y != v), (i, j)
        assert (x == 1) == (y == 1)
        hashable = type(y).__hash__ is not None
        assert (type(x).__hash__ is not None) == hashable
        if hashable and options.get("frozen"):
            try:
                expected = hash(y)
            except TypeError:       # a field holds a list
                continue
            assert hash(x) == expected          # same values: same set and dict order
        assert dataclasses.replace(x) == x or not options.get("eq", True)
        if options.get("frozen"):
            with pytest.raises(dataclasses.FrozenInstanceError):
                x.name = "z"
            with pytest.raises(dataclasses.FrozenInstanceError):
                del x.name
        for clone in (copy.copy(x), copy.deepcopy(x)):
            assert repr(clone) == repr(x)


@records.dataclass(frozen=True, slots=True)
class Pickled:
    a: int
    b: tuple = ()


def test_frozen_slots_instances_pickle():
    x = Pickled(1, (2, 3))
    assert pickle.loads(pickle.dumps(x)) == x


def test_defaults_are_not_shared_and_post_init_runs():
    @records.dataclass
    class Box:
        items: list = field(default_factory=list)

        def __post_init__(self):
            self.items.append("post")

    a, b = Box(), Box()
    assert a.items == ["post"] and a.items is not b.items
    assert Box(items=[1]).items == [1, "post"]


def test_methods_of_the_class_body_are_kept():
    @records.dataclass(frozen=True)
    class Custom:
        a: int

        def __repr__(self):
            return "custom"

        def __eq__(self, other):
            return True

        __hash__ = object.__hash__

    assert repr(Custom(1)) == "custom" and Custom(1) == Custom(2)
    assert Custom.__hash__ is object.__hash__


def test_recursive_repr_does_not_loop():
    @records.dataclass
    class Node:
        child: object = None

    n = Node()
    n.child = n
    assert repr(n) == "test_recursive_repr_does_not_loop.<locals>.Node(child=...)"


def test_unknown_options_are_refused():
    with pytest.raises(TypeError):
        records.dataclass(order=True)


def test_frozen_init_over_a_slotted_base():
    """A frozen record without slots stores its fields in its `__dict__` directly; one whose
    base has slots must still fill the slots (a `__dict__` entry would hide nothing there
    and leave the slot unset)."""
    @records.dataclass(slots=True)
    class Base:
        a: int

    @records.dataclass(frozen=True)
    class Frozen(Base):
        b: int = 2

    @records.dataclass(frozen=True)
    class Plain:
        a: int
        b: str = "x"

    f = Frozen(1)
    assert (f.a, f.b) == (1, 2) and Base.a.__get__(f) == 1
    p = Plain(3)
    assert vars(p) == {"a": 3, "b": "x"} and p == Plain(3, "x") and hash(p) == hash(Plain(3))
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.a = 4
