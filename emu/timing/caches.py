"""A set-associative, LRU cache of lines (the model's L1 and L2). Real GPUs hash addresses
onto sets; a plain modulo mapping is the simple model the issue asks for."""
from __future__ import annotations


class Cache:
    def __init__(self, size_bytes: int, line: int, ways: int):
        self.line = line
        self.ways = max(1, ways)
        self.sets = max(1, size_bytes // (line * self.ways))
        self._sets: dict[int, dict] = {}     # set -> {line: None}, LRU first (made on use)
        self.hits = self.misses = 0

    def lookup(self, line_no: int, allocate: bool = True) -> bool:
        """Whether `line_no` (address // line) hits; a miss fills it when `allocate`."""
        s = self._sets.setdefault(line_no % self.sets, {})
        if line_no in s:
            del s[line_no]
            s[line_no] = None
            self.hits += 1
            return True
        self.misses += 1
        if allocate:
            if len(s) >= self.ways:
                del s[next(iter(s))]
            s[line_no] = None
        return False

    def invalidate(self, line_no: int) -> None:
        self._sets.get(line_no % self.sets, {}).pop(line_no, None)
