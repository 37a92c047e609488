"""Session set-up shared by every test module."""


def pytest_configure(config):
    # PLY writes its generated tables next to the frontend on first use. Build them once in
    # the controlling process, before pytest-xdist starts workers that would race to write
    # (and read half-written) table files on a fresh checkout.
    if not hasattr(config, "workerinput"):
        from ptx2sass.frontend import lexer, parser
        lexer.make_lexer()
        parser._parser()
