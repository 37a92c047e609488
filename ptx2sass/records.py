"""`dataclass` for ptx2sass's record types (IR, syntax tree, encoder and cubin models), with
the class-creation cost cut to what start-up can afford.

The standard decorator compiles each generated method from source: ~0.4 ms a class on
Python 3.11, ~40 ms for the ~100 classes every compile imports, more than a small kernel's
code generation. Here the standard decorator still does the bookkeeping (fields, kw_only,
slots, `__dataclass_fields__`, so `dataclasses.fields`, `replace` and `is_dataclass` work
unchanged), but is asked for no methods; `__init__`, the one that is hot, is compiled from
the same source the standard decorator would write (one compile a class), and `__repr__`,
`__eq__`, `__hash__` and the frozen checks are shared functions over an `attrgetter` of the
fields, with the standard decorator's semantics (equal only to the same class, the same
hash values, `FrozenInstanceError`).

Options: `frozen`, `slots`, `kw_only`, `eq` (others raise); fields with defaults or
`field(default_factory=...)`, `field(compare=False)` (left out of `==` and the hash);
`__post_init__`. A method the class body defines is kept.
"""
from __future__ import annotations

import dataclasses
import operator
from dataclasses import MISSING, FrozenInstanceError
from reprlib import recursive_repr

_OPTIONS = {"frozen", "slots", "kw_only", "eq"}
class _Factory:
    def __repr__(self):
        return "<factory>"      # how signatures show a default_factory, as the standard's


_HAS_FACTORY = _Factory()


def dataclass(cls=None, /, **options):
    """`dataclasses.dataclass(cls, **options)` for the options above."""
    unknown = set(options) - _OPTIONS
    if unknown:
        raise TypeError(f"ptx2sass.records.dataclass does not take {sorted(unknown)}")

    def wrap(cls):
        return _process(cls, options.get("frozen", False), options.get("eq", True),
                        options.get("slots", False), options.get("kw_only", False))
    return wrap if cls is None else wrap(cls)


def _process(cls, frozen: bool, eq: bool, slots: bool, kw_only: bool):
    own = dict(cls.__dict__)
    if not own.get("__doc__"):
        cls.__doc__ = cls.__name__      # else the decorator computes a signature text for it
    cls = dataclasses.dataclass(cls, init=False, repr=False, eq=False, slots=slots,
                                kw_only=kw_only)
    fields = [f for f in dataclasses.fields(cls)]
    names = tuple(f.name for f in fields)
    key = _key(tuple(f.name for f in fields if f.compare))   # `field(compare=False)`: left out
    if "__init__" not in own:
        cls.__init__ = _init(cls, fields, frozen, slots)
    if "__repr__" not in own:
        cls.__repr__ = _repr(names)
    if eq and "__eq__" not in own:
        cls.__eq__ = _eq(key)
    explicit_hash = own.get("__hash__", MISSING) not in (MISSING, None) or (
        "__hash__" in own and "__eq__" not in own)
    if eq and not explicit_hash:
        cls.__hash__ = _hash(key) if frozen else None
    if frozen:
        cls.__setattr__, cls.__delattr__ = _frozen(cls, set(names))
        if slots:        # pickle and copy restore slots with setattr: let them
            cls.__getstate__, cls.__setstate__ = _slot_state(names)
    return cls


def _key(names: tuple[str, ...]):
    """The field values as the standard decorator compares and hashes them: a tuple."""
    if not names:
        return lambda self: ()
    if len(names) == 1:
        get = operator.attrgetter(names[0])
        return lambda self: (get(self),)
    return operator.attrgetter(*names)


def _init(cls, fields, frozen: bool, slots: bool = False):
    """`__init__` from the text the standard decorator writes for these fields; a frozen
    class with a `__dict__` stores into it directly (what `object.__setattr__` does there,
    without a call per field: immediates are made by the ten thousand)."""
    env = {"__object_setattr": object.__setattr__, "_HAS_FACTORY": _HAS_FACTORY}
    positional, keyword, body = [], [], []
    direct = frozen and not slots and fields and not any(
        "__slots__" in vars(k) for k in cls.__mro__[:-1])     # (a slot is no `__dict__` entry)
    # a frozen class's own slots are filled through their descriptors (one C call a field,
    # without `object.__setattr__`'s look-up of the name)
    own_slots = set(vars(cls).get("__slots__", ())) if frozen and slots else set()
    for f in fields:
        if f.default is not MISSING:
            env[f"_dflt_{f.name}"] = f.default
            param = f"{f.name}=_dflt_{f.name}"
            value = f.name
        elif f.default_factory is not MISSING:
            env[f"_dflt_{f.name}"] = f.default_factory
            param = f"{f.name}=_HAS_FACTORY"
            value = f"_dflt_{f.name}() if {f.name} is _HAS_FACTORY else {f.name}"
        else:
            param = value = f.name
        (keyword if f.kw_only else positional).append(param)
        if direct:
            body.append(f"_own[{f.name!r}] = {value}")
        elif f.name in own_slots:
            env[f"_set_{f.name}"] = vars(cls)[f.name].__set__
            body.append(f"_set_{f.name}(self, {value})")
        else:
            body.append(f"__object_setattr(self, {f.name!r}, {value})" if frozen
                        else f"self.{f.name} = {value}")
    if direct:
        body.insert(0, "_own = self.__dict__")
    if hasattr(cls, "__post_init__"):
        body.append("self.__post_init__()")
    params = ", ".join(["self", *positional, *(["*", *keyword] if keyword else [])])
    text = (f"def __init__({params}):\n" + "".join(f"    {line}\n" for line in body or ["pass"]))
    exec(compile(text, f"<{cls.__qualname__}.__init__>", "exec"), env)
    init = env["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__annotations__ = {**{f.name: f.type for f in fields}, "return": None}
    return init


def _repr(names: tuple[str, ...]):
    @recursive_repr()
    def __repr__(self):
        return (f"{self.__class__.__qualname__}("
                + ", ".join(f"{n}={getattr(self, n)!r}" for n in names) + ")")
    return __repr__


def _eq(key):
    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented
    return __eq__


def _hash(key):
    def __hash__(self):
        return hash(key(self))
    return __hash__


def _frozen(cls, names: set[str]):
    def __setattr__(self, name, value):
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self, name):
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)
    return __setattr__, __delattr__


def _slot_state(names: tuple[str, ...]):
    def __getstate__(self):
        return [getattr(self, n) for n in names]

    def __setstate__(self, state):
        for n, v in zip(names, state):
            object.__setattr__(self, n, v)
    return __getstate__, __setstate__
