"""`python -m ptx2sass`: the ptxas-compatible command (see ptx2sass.cli)."""
from ptx2sass.cli import console

if __name__ == "__main__":
    console()
