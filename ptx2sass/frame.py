"""A function's stack frame: where its local-memory bytes live relative to the stack pointer.

Local memory (PTX `.local` variables, register spills, outgoing call arguments) is
addressed in SASS as `[R1+offset]`: the prologue moves the stack pointer down by the frame
size (`IADD3 R1, R1, -size, RZ`) and every slot is a fixed offset above it. ptxas reports the
size in `.nv.info` as FRAME_SIZE (and MIN_STACK_SIZE for a leaf kernel) and in the debug
frame's CFA rows.

API (used by isel for `.local` variables, and meant for the spiller and call lowering):

    frame = Frame()
    offsets = frame.place_variables(fn.locals_in_local_space)  # ptxas's order, see below
    at = frame.allocate(8, 8, "spill.%r7")    # one more slot: its byte offset
    frame.size                                 # total bytes, a multiple of frame.alignment
    frame.offset_of("spill.%r7")               # the offset a name got

Offsets are final when handed out (a slot never moves), so code can be selected with them
at once; `size` grows as slots are added and is read when the function's code is final.

Layout as ptxas 13.5 does it (read off its output for kernels with several `.local`
arrays): PTX variables sorted by alignment, largest first, then by size, smallest first
(declaration order among equals),
each at the next offset of its alignment; the total rounded up to 8 bytes, or to the
largest slot alignment if that is more (a 16-byte aligned array makes a 16-byte multiple).
"""
from __future__ import annotations

from ptx2sass.records import dataclass

FRAME_ALIGN = 8


def align_up(n: int, a: int) -> int:
    return (n + a - 1) // a * a


@dataclass(frozen=True)
class FrameSlot:
    name: str | None
    offset: int
    size: int
    align: int


class Frame:
    """The byte layout of one function's local-memory frame."""

    def __init__(self) -> None:
        self.slots: list[FrameSlot] = []
        self._end = 0
        self._by_name: dict[str, FrameSlot] = {}

    def allocate(self, size: int, align: int = 4, name: str | None = None) -> int:
        """A new slot of `size` bytes at a multiple of `align` (a power of two); returns its
        offset from the stack pointer. `name` (optional, unique) finds it again."""
        if size < 0 or align <= 0 or align & (align - 1):
            raise ValueError(f"frame slot of size {size}, alignment {align}")
        if name is not None and name in self._by_name:
            raise ValueError(f"frame slot {name!r} allocated twice")
        at = align_up(self._end, align)
        slot = FrameSlot(name, at, size, align)
        self.slots.append(slot)
        if name is not None:
            self._by_name[name] = slot
        self._end = at + size
        return at

    def place_variables(self, variables) -> dict[str, int]:
        """Slots for PTX variables (objects with `name`, `size`, `align`), in ptxas's order:
        largest alignment first, then smallest size, then declaration order. Returns
        name -> offset."""
        order = sorted(range(len(variables)), key=lambda i: (-variables[i].align, variables[i].size, i))
        return {variables[i].name: self.allocate(variables[i].size, variables[i].align,
                                                 variables[i].name) for i in order}

    def offset_of(self, name: str) -> int:
        return self._by_name[name].offset

    @property
    def size(self) -> int:
        """The frame's size in bytes (0: the function needs no frame): a multiple of its
        alignment, so the stack pointer stays aligned for every slot."""
        return align_up(self._end, self.alignment)

    @property
    def alignment(self) -> int:
        return max([FRAME_ALIGN] + [s.align for s in self.slots])
