"""The one exception the emulator raises for anything a kernel does wrong."""
from __future__ import annotations


class EmuFault(RuntimeError):
    """A fault of the emulated program or launch, with a one-line message that names the
    kernel and the instruction offset where known (`kernel add, offset 0x0040: ...`)."""

    def __init__(self, message: str, *, kernel: str | None = None, offset: int | None = None):
        self.reason = message
        self.kernel = kernel
        self.offset = offset
        super().__init__(self._render())

    def _render(self) -> str:
        where = []
        if self.kernel is not None:
            where.append(f"kernel {self.kernel}")
        if self.offset is not None:
            where.append(f"offset 0x{self.offset:04x}")
        return (", ".join(where) + ": " if where else "") + self.reason

    def located(self, kernel: str | None = None, offset: int | None = None) -> "EmuFault":
        """The same fault with the location filled in where it was not yet known."""
        return EmuFault(self.reason, kernel=self.kernel if self.kernel is not None else kernel,
                        offset=self.offset if self.offset is not None else offset)
