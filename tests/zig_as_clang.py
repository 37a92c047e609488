"""clang's command line, served by the clang inside PyPI's `ziglang`, for tinygrad's CPU device.

tinygrad's CPU device compiles its C with `$CC ... --target=<arch>-none-unknown-elf - -o -`
and loads the object itself. CI machines have no clang, so the tests point CC at this script
(through a launcher, see tinygrad_programs.reference_device). Three differences are bridged:
zig names targets its own way, it writes debug info by default (whose relocations tinygrad's
loader does not handle), and it cannot write an object to stdout."""
import os
import subprocess
import sys
import tempfile


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        obj, args, to_stdout = os.path.join(tmp, "out.o"), [], False
        it = iter(argv)
        for a in it:
            if a.startswith("--target="):
                args += ["-target", a.split("=", 1)[1].split("-")[0] + "-freestanding-none"]
            elif a == "-o":
                out = next(it)
                to_stdout = out == "-"
                args += ["-o", obj if to_stdout else out]
            else:
                args.append(a)
        run = subprocess.run([sys.executable, "-m", "ziglang", "cc", "-g0", *args])
        if run.returncode == 0 and to_stdout:
            with open(obj, "rb") as f:
                sys.stdout.buffer.write(f.read())
        return run.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
