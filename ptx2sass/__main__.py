"""`python -m ptx2sass`: the ptxas-compatible command (see ptx2sass.cli)."""
import sys

from ptx2sass.cli import main

if __name__ == "__main__":
    sys.exit(main())
