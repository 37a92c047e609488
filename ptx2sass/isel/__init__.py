"""Instruction selection: SSA IR (PTX operations) → machine IR (SASS on virtual registers)."""
from ptx2sass.isel.select import select_function

__all__ = ["select_function"]
