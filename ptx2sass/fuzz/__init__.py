"""Differential fuzzing: random valid PTX programs compiled by the pinned ptxas and by
ptx2sass, both run in the emulator on the same inputs, outputs compared bit for bit.

    program.py    the program model (statements, registers) and its rendering to PTX
    generator.py  seeded random programs over the instruction set
    inputs.py     deterministic launch, parameters and buffers (special values included)
    runner.py     compile both ways, run both, classify the outcome with a signature
    reducer.py    delta debugging of a failing program into a regression test
    coverage.py   what a campaign emitted, against the PTX instruction inventory
    report.py     campaign reports (JSON and text), merging of partial results
    campaign.py   running seeds on a local process pool or as Ray tasks
    diff.py       `ptx2sass diff FILE.ptx`: both compilers on one file, side by side
    cli.py        the `ptx2sass-fuzz` command

Development-time only (it drives the oracle): the compiler never imports this package.
"""
