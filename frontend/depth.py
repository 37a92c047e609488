"""Room for the frontend's recursive walks of the syntax tree.

The tree is as deep as the input's nesting, and the parser bounds that nesting where ptxas
does (1665 braces, 9978 parentheses, 4989 unary minus signs: its parser stack holds 10000
states; long flat chains fold as they are read). Walks up to those depths need more Python
frames than the default limit of 1000; Python 3.11 keeps Python-to-Python calls off the C
stack, so a higher limit for the walk is safe.
"""
from __future__ import annotations

import sys
from contextlib import contextmanager

WALK_RECURSION_LIMIT = 50_000


@contextmanager
def deep_walks():
    """Raise the recursion limit for the duration (never lower it)."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, WALK_RECURSION_LIMIT))
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)
