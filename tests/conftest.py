"""Session set-up shared by every test module."""
import sys

import pytest


def pytest_configure(config):
    # PLY writes its generated tables next to the frontend on first use. Build them once in
    # the controlling process, before pytest-xdist starts workers that would race to write
    # (and read half-written) table files on a fresh checkout.
    if not hasattr(config, "workerinput"):
        from ptx2sass.frontend import lexer, parser
        lexer.make_lexer()
        parser._parser()


@pytest.fixture(autouse=True)
def _fresh_emulated_programs():
    """Each test starts with none of `ptx2sass.emu.run`'s kept programs (emu/launch.py):
    one test's launches, or its changes to the emulator's code, do not reach another's."""
    launch = sys.modules.get("ptx2sass.emu.launch")
    if launch is not None:
        launch.forget_programs()
    yield
