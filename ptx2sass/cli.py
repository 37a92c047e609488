"""The `ptx2sass` command: a drop-in for `ptxas`, with its options, messages and exit codes.

    ptx2sass [options] file.ptx

Reads the command line exactly as the pinned ptxas does (see `ptx2sass.options`), prints
diagnostics in its form (`file.ptx, line 12; error   : ...`, `ptx2sass fatal   : ...`),
exits 255 on any error and never shows a Python traceback (PTX2SASS_DEBUG=1 shows one for
internal errors). The cubin is written as ptxas writes it, through the path named
(`ptx2sass.output_file`), and only once the compile has succeeded. `-v` prints ptxas's
resource lines, read back from the cubin bytes. `--dump-ir` (ours only) prints the SSA IR of the checked module instead of compiling.

Imports stay lazy: `--version` and `--help` load nothing beyond the option table, and no
path here imports NumPy (process start time is part of the compile time users see).
"""
from __future__ import annotations

import gc
import os
import re
import sys
import time

from ptx2sass.errors import CompileError, format_diagnostic
from ptx2sass import options as opt
from ptx2sass.tool_arguments import tool_arguments

PROG = "ptx2sass"
PTXAS = "ptxas"


def program_name() -> str:
    """The name every diagnostic line starts with: `ptxas` where the command was invoked
    under that name (installed or linked as `ptxas`, to stand in for it), else
    `ptx2sass`. One rule for errors, warnings and `-v` info lines alike."""
    invoked = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return PTXAS if invoked == PTXAS else PROG
EXIT_OK = 0
EXIT_ERROR = 255
PTXAS_RELEASE = "13.5, V13.5.37"   # the ptxas whose command line this one reproduces
DEBUG_ENV = "PTX2SASS_DEBUG"
ABORTED = "Ptx assembly aborted due to errors"
OUT_OF_MEMORY = "Memory allocation failure"     # ptxas's words when an allocation fails
# Fatal errors after which ptxas stops without its closing ABORTED line.
ENDS_WITHOUT_ABORT = ("SM version specified by .target is higher than default SM version assumed",
                      "PTX with .target '", "Program with .target '",      # (-arch vs `.target`)
                      "Unresolved extern function ", "In ABI compilation, ",
                      "'Compile only(-c)' requires ABI")     # (message prefixes)

# Our own options, beyond ptxas's table: spelled only in their long form.
DUMP_IR = opt.Option("dump-ir", "", opt.FLAG,
                     "ptx2sass only: print the SSA IR of the checked module and stop.")
OWN_OPTIONS = {DUMP_IR.name: DUMP_IR}


class UsageError(Exception):
    """A bad command line: ptxas prints one fatal line and stops."""


# Command line -----------------------------------------------------------------------------

class CommandLine:
    """What the command line asked for: option values by long name, inputs, warnings."""

    def __init__(self):
        self.values: dict[str, object] = {}
        self.inputs: list[str] = []          # file names ("-": stdin)
        self.warnings: list[str] = []
        # alias -> value as `.note.nv.tkinfo` records it (ptx2sass.tool_arguments)
        self.recorded: dict[str, str] = {}

    def get(self, name: str, default=None):
        return self.values.get(name, default)

    def flag(self, name: str) -> bool:
        return bool(self.values.get(name))


def _lookup(key: str) -> tuple[opt.Option | None, str | None]:
    """The option an argument names (one dash already dropped), and a value glued onto a
    single-letter alias (`O3`, `m64`)."""
    if key.startswith("-"):
        long = key[1:]
        found = opt.BY_LONG.get(long) or OWN_OPTIONS.get(long)
        return found, None
    if key in opt.BY_ALIAS:
        return opt.BY_ALIAS[key], None
    for o in opt.OPTIONS:
        if o.glued and key.startswith(o.alias) and len(key) > len(o.alias):
            return o, key[len(o.alias):]
    return None, None


# `--sanitize` value whose instrumentation is not written: refused once the PTX is checked
SANITIZER_NOT_WRITTEN = "memcheck"


def _typed_value(o: opt.Option, value: str):
    if o.kind == opt.BOOL:
        if value not in ("true", "false"):
            raise UsageError(f"'{value}': expected true or false")
        return value == "true"
    if o.kind == opt.NUMBER:
        try:
            number = int(value, 10)
        except ValueError:
            raise UsageError(f"'{value}': expected a number") from None
        if not -2 ** 31 <= number < 2 ** 31:
            raise UsageError(f"32-bit integer value ({value}) out of range")
        if o.values and value not in o.values:
            raise UsageError(f"Value '{value}' is not defined for option '{o.name}'")
        return number
    if o.values and value not in o.values:
        raise UsageError(f"Value '{value}' is not defined for option '{o.name}'")
    return value


def _read_options_file(path: str) -> list[str]:
    import shlex
    try:
        with open(path, encoding="latin-1") as f:
            return shlex.split(f.read().partition("\0")[0])     # (ptxas reads up to a NUL)
    except (OSError, ValueError):
        raise UsageError(f"Could not open options file '{path}'") from None


def parse_command_line(argv: list[str]) -> CommandLine:
    """Read argv as ptxas does; raises UsageError with ptxas's message on the first fault."""
    cl = CommandLine()
    queue = list(argv)
    i = 0
    while i < len(queue):
        arg = queue[i]
        i += 1
        if arg == "-" or not arg.startswith("-"):
            cl.inputs.append(arg)
            cl.recorded.setdefault("<input>", arg)
            continue
        key, has_eq, value = arg[1:].partition("=")
        o, glued = _lookup(key)
        if o is None:
            raise UsageError(f"Unknown option '{key}'")
        if not o.takes_value:
            cl.values[o.name] = True
            cl.recorded[o.alias] = ""
            continue
        if glued is not None:
            value = glued
        elif not has_eq:
            if o.optional_value and not key.startswith("-"):
                cl.recorded.setdefault(o.alias, "0")      # (recorded so, measured)
                continue       # a bare `-O` changes nothing; `--opt-level` takes the next
            if i < len(queue):
                value = queue[i]
                i += 1
            else:
                raise UsageError(f"argument expected after '{arg}'")
        if o.kind == opt.LIST:
            items = value.split(",") if o.split_commas else [value]
            cl.values.setdefault(o.name, []).extend(items)
            if o.split_commas:
                cl.recorded[o.alias] = ",".join(cl.values[o.name])
            if o.name == "options-file":
                extra = [a for p in items for a in _read_options_file(p)]
                queue[i:i] = extra
            continue
        typed = _typed_value(o, value)
        if o.name in cl.values and cl.values[o.name] != typed:
            cl.warnings.append(f"incompatible redefinition for option '{o.name}', "
                               "the last value of this option was used")
        cl.values[o.name] = typed
        cl.recorded[o.alias] = value
    return cl


# Help and version -------------------------------------------------------------------------

def _wrap(text: str, width: int = 80, indent: str = "        ") -> list[str]:
    import textwrap
    return textwrap.wrap(text, width=width, initial_indent=indent, subsequent_indent=indent)


def help_text() -> str:
    """`--help` in ptxas's layout: usage line, then each option with its alias column."""
    lines = ["", f"Usage  : {PROG} [options] <ptx file>,...", "", "Options", "=======", ""]
    for o in sorted(opt.OPTIONS + tuple(OWN_OPTIONS.values()), key=lambda o: o.name):
        if o.hidden:
            continue
        left = f"--{o.name}" + (f" {o.placeholder}" if o.placeholder else "")
        right = f"(-{o.alias})" if o.alias else ""
        lines.append(f"{left:<52}{right:<28}".rstrip())
        text = o.help
        if o.effect == opt.ACCEPTED:
            text += " (Accepted for ptxas compatibility; no effect in ptx2sass.)"
        lines += _wrap(text)
        if o.values:
            shown = ",".join(v if o.kind == opt.NUMBER else f"'{v}'" for v in o.values)
            lines += _wrap(f"Allowed values for this option:  {shown}.")
        if o.default is not None:
            shown = o.default if o.kind == opt.NUMBER else f"'{o.default}'"
            lines.append(f"        Default value:  {shown}.")
        lines.append("")
    return "\n".join(lines) + "\n"


def version_text() -> str:
    """`--version` in ptxas's five-line layout, naming ptx2sass. The release line keeps the
    words `release 13.5` because tools (Triton) read the PTX ISA level they may emit from it."""
    from ptx2sass import __version__ as own
    py = ".".join(map(str, sys.version_info[:3]))
    return (f"{PROG}: PTX optimizing assembler, an open-source drop-in for ptxas\n"
            f"Copyright (c) the ptx2sass authors\n"
            f"Version {own}, running on Python {py}\n"
            f"Command-line compatible with Cuda compilation tools, release {PTXAS_RELEASE}\n"
            f"Build {PROG} {own}\n")


def list_arch_text() -> str:
    return "".join(f"{sm}\n" for sm in opt.LISTED_ARCHS)


# Diagnostics ------------------------------------------------------------------------------

class Reporter:
    """Prints ptxas-style lines on stderr, applying -w and -Werror to warnings."""

    def __init__(self, cl: CommandLine, stream=None):
        self.stream = stream or sys.stderr
        self.name = program_name()
        self.quiet = cl.flag("disable-warnings")
        self.werror = cl.flag("warning-as-error") and not self.quiet
        self.failed = False

    def line(self, text: str) -> None:
        self.stream.write(text + "\n")

    def fatal(self, message: str) -> int:
        self.line(f"{self.name} {format_diagnostic(message, None, None, 'fatal')}")
        return EXIT_ERROR

    def warning(self, message: str, file: str | None = None, line: int | None = None,
                promote: bool = True) -> None:
        """`promote=False`: a warning -Werror leaves a warning (ptxas's about options given
        twice)."""
        if self.quiet:
            return
        as_error = self.werror and promote
        self.failed |= as_error
        severity = "error" if as_error else "warning"
        self.line(f"{self.name} {format_diagnostic(message, file, line, severity)}")

    def diagnostic(self, d: CompileError) -> None:
        if d.severity == "warning":
            self.warning(d.message, d.file, d.line)
            return
        self.failed = True
        self.line(f"{self.name} {format_diagnostic(d.message, d.file, d.line, d.severity)}")

    def info_at(self, d: CompileError) -> None:
        """An info line at a PTX line (ptxas's advisories): not a failure, not a warning."""
        self.line(f"{self.name} {format_diagnostic(d.message, d.file, d.line, 'info')}")

    def info(self, text: str) -> None:
        self.line(f"{self.name} {format_diagnostic(text, None, None, 'info')}")


def _all_diagnostics(err: CompileError) -> list[CompileError]:
    return list(getattr(err, "diagnostics", None) or [err])


def _report_errors(err: CompileError, report: Reporter) -> int:
    """Every diagnostic the error carries, then ptxas's closing line."""
    diagnostics = _all_diagnostics(err)
    for d in diagnostics:
        report.diagnostic(d)
    if diagnostics[-1].message.startswith(ENDS_WITHOUT_ABORT) and diagnostics[-1].file is None:
        return EXIT_ERROR
    return report.fatal(ABORTED)


# Option values that need the target -------------------------------------------------------

class RegisterLimit:
    """-maxrregcount as ptxas reads it: `limit` is what the code generator must fit (None:
    no bound), `shown` the value ptxas's `-v` names in its "Overriding" lines."""

    def __init__(self, limit: int | None, shown: int):
        self.limit = limit
        self.shown = shown


def _register_limit(cl: CommandLine, arch: str, report: Reporter) -> RegisterLimit | None:
    """archmax/archmin/N; too big is ignored (warned; `-v` then names the arch maximum),
    too small raised to ptxas's lower bound (warned). `archmin` is 32, a bound below which
    only an explicit number goes (24 at the least), as ptxas 13.5 does on every target."""
    return _register_option(cl, "maxrregcount", arch, report)


def _register_option(cl: CommandLine, name: str, arch: str, report: Reporter) -> RegisterLimit | None:
    """`name`'s value (-maxrregcount, or -func-maxrregcount under -c) judged as ptxas does."""
    raw = cl.get(name)
    if raw is None:
        return None
    from ptx2sass.encoder.arch import arch_info, UnknownArch
    lower = opt.MIN_REGISTERS
    if arch.startswith("lto_"):
        # ptxas 13.5.37 for LTO targets: every number but 0 is "too big", 0 is raised to 16,
        # archmax/archmin set nothing
        if raw in ("archmax", "archmin"):
            return RegisterLimit(None, 0)
        max_regs, lower = 0, opt.LTO_MIN_REGISTERS
    else:
        try:
            max_regs = arch_info(_real_arch(arch)).max_registers
        except UnknownArch:
            max_regs = 255
    if raw == "archmax":
        return RegisterLimit(max_regs, max_regs)
    if raw == "archmin":
        return RegisterLimit(opt.ARCHMIN_REGISTERS, opt.ARCHMIN_REGISTERS)
    try:
        n = int(raw, 10)
    except ValueError:
        raise UsageError(f"Invalid value '{raw}' for option '{name}'") from None
    if n < 0 or n > max_regs:
        report.warning(f"Too big maxrregcount value specified {n}, will be ignored")
        return RegisterLimit(None, max_regs)
    if n < lower:
        report.warning(f"For profile {arch} adjusting per thread register count of {n} "
                       f"to lower bound of {lower}")
        return RegisterLimit(lower, lower)
    return RegisterLimit(n, n)


def _check_options(cl: CommandLine, arch: str, report: Reporter) -> "RegisterLimit | None":
    """The command line's values and combinations, judged in ptxas 13.5.37's order (measured
    with all of them at once: its warnings come in this order, and a fatal one stops it
    where it stands): -pic; the register usage level; -Ofc's value; -c with -ewp; the
    cloning option; -split-compile's value; -g with -lineinfo, with optimisation, with the
    usage level and with -Ofc; the cache operators; -maxrregcount, then
    -func-maxrregcount; the launch-bound options beside -maxrregcount; -preserve-relocs on
    sm_90 and later; the controls file. Returns -maxrregcount's limit."""
    if "position-independent-code" in cl.values and \
            not cl.flag("suppress-position-independent-code-warning"):
        report.warning("'--position-independent-code' is a deprecated option and is no "
                       "longer functional. It will be removed in a future release")
    usage = cl.get("register-usage-level")
    if usage is not None and usage not in opt.REGISTER_USAGE_LEVELS:
        report.warning(f"Value of RegUsageLevel ({usage}) is out of valid range {{0..10}}, "
                       "option will be ignored")
    elif usage is not None and cl.get("opt-level") == 0:
        report.warning("Conflicting options '-O0' and '--register-usage-level' specified, "
                       "ignoring '--register-usage-level' option")
    level = cl.get("Ofast-compile")
    if level is not None and level not in opt.FAST_COMPILE_LEVELS:
        raise UsageError(f"Invalid value for --Ofast-compile/-Ofc ({level}), "
                         "is not 'max', 'mid', 'min', or '0'")
    if cl.flag("compile-only") and cl.flag("extensible-whole-program"):
        report.warning("Conflicting options '--compile-only' and '--extensible-whole-program' "
                       "specified, ignoring '--extensible-whole-program' option")
    if cl.get("enable-func-clone-sc") is True:
        if not cl.flag("compile-only"):
            report.warning("Option '--enable-func-clone-sc' requires option '--compile-only'; "
                           "ignoring since latter is not specified")
        else:
            if cl.get("opt-level") == 0:
                report.warning("Conflicting options '--opt-level=0' and '--enable-func-clone-sc' "
                               "specified, ignoring '--enable-func-clone-sc' option")
            if cl.flag("device-debug"):
                report.warning("Conflicting options '--device-debug' and '--enable-func-clone-sc' "
                               "specified, ignoring '--enable-func-clone-sc' option")
    threads = cl.get("split-compile")
    if threads is not None and int(threads) < 0:
        raise UsageError(f"Invalid value '{threads}' for option '--split-compile'")
    # -Ofc min/mid go with -O1 only, max with -O0 only (an -O given; the default is no conflict)
    fitting = {"min": 1, "mid": 1, "max": 0}.get(level)
    if fitting is not None and cl.get("opt-level") not in (None, fitting):
        others = "<0,2,3>" if fitting == 1 else "<1,2,3>"
        raise UsageError(f"Conflicting options -opt-level={others} and --Ofast-compile={level} "
                         "specified")
    if cl.flag("device-debug"):
        if cl.flag("generate-line-info"):
            report.warning("Conflicting options --device-debug and --generate-line-info "
                           "specified, ignoring --generate-line-info option")
            cl.values["generate-line-info"] = False
        if cl.get("opt-level", 0) != 0:
            raise UsageError("Optimized debugging not supported")
        cl.values["opt-level"] = 0
        if usage is not None:
            report.warning("Conflicting options '--device-debug' and '--register-usage-level' "
                           "specified, ignoring '--register-usage-level' option")
        if level in ("min", "mid", "max"):
            report.warning("Conflicting options '--device-debug' and '--Ofast-compile=<min,mid,max>' "
                           "specified, ignoring '--Ofast-compile=<min,mid,max>' option")
    for name, allowed in opt.CACHE_OPERATORS.items():
        value = cl.get(name)
        if value is not None and value not in allowed:
            what = "load" if "load" in name else "store"
            report.diagnostic(CompileError(      # (ptxas says "default" for -flcm/-fscm too)
                f"Invalid default cache modifier on {what} specified: {value}"))
    for force, default in (("force-load-cache", "def-load-cache"), ("force-store-cache", "def-store-cache")):
        if cl.get(force) is not None and cl.get(default) is not None:
            report.warning(f"Conflicting options {force} and {default} specified, ignoring {default} option")
    maxrregcount = _register_limit(cl, arch, report)
    if cl.get("device-function-maxrregcount") is not None:
        if cl.flag("compile-only"):       # (checked, otherwise without effect)
            _register_option(cl, "device-function-maxrregcount", arch, report)
        else:
            report.warning("Command line option 'device-function-maxrregcount' not supported "
                           "for 'whole program compilation', will be ignored")
    if cl.get("maxrregcount") is not None and (
            not arch.startswith("lto_") or maxrregcount.limit is not None):   # (LTO: a bound set)
        for bound in ("minnctapersm", "maxntid"):
            if cl.get(bound) is not None:
                report.warning(f"Conflicting options -maxrregcount and -{bound} specified, "
                               f"ignoring -{bound} option")
    if cl.flag("preserve-relocs") and _preserve_relocs_unfinished(arch):
        report.warning(f"'--preserve-relocs' option is not fully implemented for '{arch}' and "
                       "may not work as expected")
    _check_controls_file(cl.get("apply-controls"))
    return maxrregcount


def _preserve_relocs_unfinished(arch: str) -> bool:
    """Where ptxas warns about -preserve-relocs: sm_90 and later, real or virtual targets
    (not the lto_ ones)."""
    prefix, _, number = arch.partition("_")
    digits = number.rstrip("af")
    return prefix in ("sm", "compute") and digits.isdigit() and int(digits) >= 90


def _implies_debug_information(module) -> bool:
    """A `.loc` (line tables) or `.target debug` (-g): ptxas then takes
    --suppress-debug-info without -lineinfo or -g."""
    from ptx2sass.frontend import ast
    if module.target is not None and "debug" in module.target.names:
        return True
    for item in module.items:
        if isinstance(item, ast.Function) and item.body is not None:
            stack = [item.body.statements]
            while stack:
                for st in stack.pop():
                    if isinstance(st, ast.Loc):
                        return True
                    if isinstance(st, ast.Block):
                        stack.append(st.statements)
    return False


def _debug_section_warnings(module, report: Reporter) -> None:
    """-g reads the PTX's DWARF sections; ptxas says which are missing (errors with -Werror)."""
    from ptx2sass.frontend import ast
    names = {item.name for item in module.items if isinstance(item, ast.Section)}
    if ".debug_abbrev" not in names:
        report.warning(" .debug_abbrev section not found")
        if ".debug_info" in names and not report.failed:
            report.info("skipping .debug_info section due to missing .debug_abbrev section")
    if ".debug_info" not in names:
        report.warning(" .debug_info section not found")


def _declared_spaces(module) -> set[str]:
    """The state spaces of the module's variable declarations, at any level (a walk
    without recursion: blocks nest as deep as the input's braces)."""
    from ptx2sass.frontend import ast
    spaces, work = set(), list(module.items)
    while work:
        item = work.pop()
        if isinstance(item, ast.VariableDecl):
            spaces.add(item.space)
        elif isinstance(item, ast.Function) and item.body is not None:
            work.extend(item.body.statements)
        elif isinstance(item, ast.Block):
            work.extend(item.statements)
    return spaces


def _target_option_messages(cl: CommandLine, module, report: Reporter) -> None:
    """What ptxas says, once the PTX is read, of options its `.target` does not take:
    tcgen05 tensor-memory checks (arch-specific sm_100a/f to sm_119a/f only), fabric checks (sm_100 and up),
    the deprecated pre-Volta barrier behaviour (every target it compiles for), and entries
    in tools-patch code."""
    target = module.target.names[0] if module.target is not None and module.target.names else None
    from ptx2sass.frontend.instructions import real_target
    real = real_target(target) if target else None
    number = int(re.sub(r"\D", "", real) or 0) if real and real.startswith("sm_") else 0
    if cl.flag("compile-as-tools-patch"):
        # (ptxas 13.5.37: any `.shared` / `.const` variable declared, module or function
        # level, used or not; then any entry; each once, in this order)
        spaces = _declared_spaces(module)
        for space, what in ((".shared", "shared memory"), (".const", "constants")):
            if space in spaces:
                report.diagnostic(CompileError(f"Allocating additional {what} is not allowed "
                                               "when command line option "
                                               "'--compile-as-tools-patch' is specified "))
        if any(True for _ in module.entries()):
            report.diagnostic(CompileError("Entry function is not allowed when command line option "
                                           "'--compile-as-tools-patch' is specified "))
    if cl.flag("legacy-bar-warp-wide-behavior"):
        report.warning("'--legacy-bar-warp-wide-behavior' is a deprecated option, It will be "
                       "removed in future release and is not recommended")
        report.warning("Command line option '--legacy-bar-warp-wide-behavior' not supported for "
                       "'.target sm_70', will be ignored")
        if cl.flag("compile-only"):
            report.warning("Option '--legacy-bar-warp-wide-behavior' may not work as expected in "
                           "separate compilation unless all modules participating in linking have "
                           "this option specified.")
    if target and (cl.flag("g-tensor-memory-access-check") or cl.flag("gno-tensor-memory-access-check")) \
            and not (100 <= number < 120 and real[-1] in "af"):
        report.info("Command line option '--g-tensor-memory-access-check / "
                    "--gno-tensor-memory-access-check' not supported for "
                    f"'.target {target}', will be ignored")
    if target and cl.flag("gno-fabric-access-check") and number < 100:
        report.info(f"Command line option '--gno-fabric-access-check' not supported for "
                    f"'.target {target}', will be ignored")


MAX_THREADS_PER_BLOCK = 1024


def _apply_launch_bounds(module, cl: CommandLine, report: Reporter) -> None:
    """-maxntid / -minnctapersm as ptxas applies them: as if every entry without the
    directive had it (with --override-directive-values, in place of the directive), all of
    it ignored when -maxrregcount is given. A value that is not a positive number is
    ignored; more than three, or more threads than a block may have, are warned about."""
    if cl.get("maxrregcount") is not None:
        return
    from ptx2sass.frontend import ast
    override = cl.flag("override-directive-values")
    dims = [int(v) for v in cl.get("maxntid") or () if v.isdigit() and int(v) > 0]
    if len(dims) > 3:
        report.warning("Too many values specified for option '-maxntid', option will be ignored")
        dims = []
    blocks = cl.get("minnctapersm")
    for fn in module.entries():
        given = {d.name for d in fn.directives}
        wanted = {}
        if dims and (override or not given & {".maxntid", ".reqntid"}):
            threads = 1
            for d in dims:
                threads *= d
            if threads > MAX_THREADS_PER_BLOCK:
                report.warning(f"Value of threads per SM for entry {fn.name} is out of range. "
                               ".minnctapersm and .maxntid will be ignored")
                continue
            wanted[".maxntid"] = dims
        if blocks and blocks > 0 and (override or ".minnctapersm" not in given):
            wanted[".minnctapersm"] = [blocks]
        if wanted:
            fn.directives = [d for d in fn.directives if d.name not in wanted] + [
                ast.PerformanceDirective(name=name, args=list(args), line=fn.line, column=0)
                for name, args in wanted.items()]


def _warn_unfit_minnctapersm(module, arch: str, report: Reporter) -> None:
    """ptxas's warning for an entry whose `.minnctapersm` CTAs of `.maxntid`/`.reqntid`
    threads cannot be resident on one SM (the code generator then ignores the directive)."""
    from ptx2sass.encoder.arch import UnknownArch, target
    from ptx2sass.launch_bounds import ignored_minnctapersm
    try:
        info = target(arch)
    except UnknownArch:
        return          # no code generator for it: the back end says so
    for fn in reversed(list(module.entries())):      # ptxas's order: the last entry first
        args = {d.name: d.args for d in fn.directives}
        dims = args.get(".maxntid") or args.get(".reqntid")
        blocks = args.get(".minnctapersm")
        if not dims or not blocks or any(int(a) <= 0 for a in (*dims, *blocks)):
            continue
        threads = 1
        for d in dims:
            threads *= int(d)
        message = ignored_minnctapersm(fn.name, threads, int(blocks[0]), info)
        if message:
            report.warning(message)


def _check_controls_file(path: str | None) -> None:
    """--apply-controls names a file in a format of NVIDIA's own that ptx2sass cannot
    read: every such file is refused, with ptxas's words for the files ptxas refuses
    (one shorter than 16 bytes gets a line of its own first, whatever its bytes)."""
    if path is None:
        return
    try:
        with open(path, "rb") as f:
            head = f.read(CONTROLS_PAYLOAD_MIN)
    except OSError:
        raise UsageError(f"File '{path}' could not be opened") from None
    if not head:
        raise UsageError(f"Input file '{path}' not in expected format")
    if len(head) < CONTROLS_PAYLOAD_MIN:
        sys.stderr.write("Error: Payload is not valid.\n")
    raise UsageError("Invalid compiler controls file")


CONTROLS_PAYLOAD_MIN = 16     # bytes (ptxas 13.5.37: 1-15 bytes "Payload is not valid")


def _real_arch(arch: str) -> str:
    """compute_89 / lto_89 check PTX as sm_89 would (encoder/arch.py)."""
    from ptx2sass.encoder.arch import real_arch
    return real_arch(arch)


def _is_virtual(arch: str) -> bool:
    from ptx2sass.encoder.arch import is_virtual_arch
    return is_virtual_arch(arch)


# Inputs and output ------------------------------------------------------------------------

def _read_inputs(cl: CommandLine, report: Reporter) -> list[tuple[str, str]] | None:
    """(name, text) of every module; an unopenable file's text is the fatal error ptxas
    reports in its place (it goes on with the other files, then aborts)."""
    modules = []
    stdin_reads = 0
    for path in cl.inputs:
        try:
            if path == "-":
                path = _stdin_file_name(stdin_reads, report)
                stdin_reads += 1
                if path is None:
                    return None
                data = sys.stdin.buffer.read()
            else:
                with open(path, "rb") as f:
                    data = f.read()
        except IsADirectoryError:
            data = b""            # ptxas reads a folder as an empty file
        except OSError:
            modules.append((path, CompileError(f"Input file '{path}' could not be opened",
                                               severity="fatal")))
            continue
        modules.append((path, data.decode("latin-1")))
    for text in cl.get("input-as-string", []) or []:
        modules.append((opt.INPUT_STRING_NAME, text))
    return modules


def _targets_debug(module) -> bool:
    """`.target debug` (ptxas's -g, from the PTX) in a parsed input."""
    target = getattr(module, "target", None)
    return target is not None and "debug" in target.names


def _parse_or_error(frontend, source: str, name: str, inputs: int):
    """One input's syntax tree; with several inputs, the error its parse ends with instead
    (ptxas reports it in that file's place and goes on with the next file)."""
    if isinstance(source, CompileError):     # a file that could not be read
        return source
    try:
        return frontend.parse(source, name)
    except CompileError as err:
        if inputs == 1:
            raise
        return err


def _stdin_file_name(index: int, report: "Reporter") -> str | None:
    """The name ptxas's messages give the `index`-th `-` input: ptxas copies standard input
    to `$TMPDIR/tmpxft_<pid>_00000000-<index>_stdin` (TMPDIR as given, `/tmp` if unset)
    and reads that. Where it cannot create files there, it stops before reading, naming
    the first temporary file it tried (None here, after that message)."""
    folder = os.environ.get("TMPDIR")
    folder = "/tmp" if folder is None else folder
    stem = f"{folder}/tmpxft_{os.getpid():08x}"
    where = folder or "/"
    if not os.path.isdir(where) or not os.access(where, os.W_OK | os.X_OK):
        report.fatal(f"Could not open output file '{stem}_0000000a'")
        return None
    return f"{stem}_00000000-{index}_stdin"


# Code generation interface ----------------------------------------------------------------

def _code_generator():
    """The back end as `generate(ptx, arch, module=None, **options) -> cubin bytes`, or None
    while there is none. With `module` (already parsed and checked), the PTX is not parsed a
    second time: `ptx2sass.codegen.compile_module` takes the SSA IR directly. Otherwise the
    public `ptx2sass.compile(ptx, arch, **options)`."""
    try:
        from ptx2sass.codegen import compile_module
    except ModuleNotFoundError as e:
        if e.name != "ptx2sass.codegen":
            raise
        compile_module = None
    if compile_module is not None:
        def generate(ptx, arch, module=None, filename="<input>", **options):
            from ptx2sass import frontend
            from ptx2sass.codegen import compile_checked
            whole_program = not options.get("compile_only")
            if module is None:
                module = frontend.parse(ptx, filename)
                frontend.check(module, arch, whole_program=whole_program)
            options.setdefault("ptx_ast", module)    # -lineinfo reads `.loc`s off the tree
            return compile_checked(module, arch, options, filename, whole_program)
        return generate
    import ptx2sass
    try:
        public = ptx2sass.compile
    except AttributeError:
        return None
    return public if callable(public) else None


def _unresolved_extern_variables(module) -> list[str]:
    """Module-scope `.extern .global/.const` variables declared before any definition (all
    inputs in order), in declaration order: ptxas's whole-program mode warns about each and
    defines it itself (an extern after its definition names that one: no warning)."""
    from ptx2sass.frontend.ast import VariableDecl
    defined, names = set(), []
    for item in module.items:
        if isinstance(item, VariableDecl) and item.space in (".global", ".const"):
            for d in item.declarators:
                if ".extern" not in item.linkage:
                    defined.add(d.name)
                elif d.name not in defined and d.name not in names:
                    names.append(d.name)
    return names


def _codegen_options(cl: CommandLine, maxrregcount: RegisterLimit | None, filename: str,
                     module=None, last_text: str | None = None) -> dict:
    return {
        "opt_level": cl.get("opt-level", 3),
        "fmad": cl.get("fmad", True),
        # the cache-operator options (ptx2sass.cache_operators)
        **{name.replace("-", "_"): cl.get(name) for name in opt.CACHE_OPERATORS},
        "uniform_datapath": cl.get("uniform-datapath", None),     # None: the target's default
        "maxrregcount": maxrregcount.limit if maxrregcount else None,
        "lineinfo": cl.flag("generate-line-info"),
        "debug": cl.flag("device-debug"),
        "suppress_debug_info": cl.flag("suppress-debug-info"),
        "ptx_text": last_text,   # `.nv_debug_ptx_txt` holds the last input file, as ptxas's does
        "compile_only": cl.flag("compile-only"),
        # (ptxas ignores -Ofc under -g: _check_options warns)
        "fast_compile": None if cl.flag("device-debug") else cl.get("Ofast-compile"),
        # -ewp: an ET_EWP object (ignored with -c: _check_options warns)
        "extensible": cl.flag("extensible-whole-program") and not cl.flag("compile-only"),
        "tools_patch": cl.flag("compile-as-tools-patch"),
        "preserve_relocs": cl.flag("preserve-relocs"),
        # (ignored without -c, with -O0 and with -g: _check_options warns)
        "clone_functions": (cl.get("enable-func-clone-sc") is True and cl.flag("compile-only")
                            and cl.get("opt-level") != 0 and not cl.flag("device-debug")),
        "tool_args": tool_arguments(cl.recorded, cl.flag("device-debug")),
        "errbar_at_exit": cl.flag("make-errors-visible-at-exit"),
        "tool_object": (os.path.basename(cl.get("output-file", "elf.o"))
                        if cl.flag("device-debug") else ""),
        "entries": tuple(dict.fromkeys(cl.get("entry") or ())) or None,
        "filename": filename,
        "module": module,    # the checked AST, so the back end need not parse again
        "spill_report": {},  # filled by the back end: kernel -> (spill store, load bytes)
        "time_report": {},   # filled by the back end: kernel -> its code generation's ms
        "frame_report": {},  # filled by the back end: kernel -> its own frame's bytes
    }


def _accepted_subset(fn, options: dict) -> dict:
    """The options the back end's signature names (all of them if it takes **kwargs), so
    that a back end growing option by option never sees one it does not know."""
    import inspect
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return {}
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return options
    return {k: v for k, v in options.items() if k in params}


# -v resource lines ------------------------------------------------------------------------

UNBOUNDED_STACK = 0xFFFFFFFF   # recursion: ptxas prints no cumulative stack size

def function_report_order(module, compile_only: bool, debug: bool = False,
                          fast_compile: str | None = None,
                          unoptimised: bool = False) -> tuple[list[str], dict[str, list[str]]]:
    """Where ptxas's -v reports the `.func`s: (those reported before the entries, each
    entry → those reported after it). Under -c the entries are among the first list, in the
    cubin's order (ptxas 13.5.37): the local functions, then the kernels and `.visible`/
    `.weak` functions, each group a depth-first postorder from the last-named function
    back, callees (the last-called first) before their callers. In whole-program mode each entry is
    followed by the functions it reaches, by name (a call through a pointer reaches every
    function whose address the module takes)."""
    from ptx2sass.inline import address_taken_functions, call_graph, call_postorder
    graph = call_graph(module)
    named = {f.name for f in module.functions()}
    funcs = [n for n in dict.fromkeys(f.name for f in module.functions() if f.kind == ".func")
             if n in graph]
    entries = [f.name for f in module.functions() if f.kind == ".entry" and f.name in graph]
    if debug and entries:
        # -g: in the cubin's order, every function out of line: the `.visible` ones first,
        # the others after the last kernel, in declaration order
        visible = {f.name for f in module.functions() if f.kind == ".func" and ".visible" in f.linkage}
        return [n for n in funcs if n in visible], {entries[-1]: [n for n in funcs if n not in visible]}
    if fast_compile in ("min", "mid", "max") and not compile_only and entries:
        # -Ofc: every function out of line, in the cubin's order (codegen._compile_order)
        from ptx2sass.inline import call_preorder
        within = set(funcs) | set(entries)
        return (call_preorder(entries, graph, within) if fast_compile == "max"
                else call_postorder(entries[::-1], graph, within)), {}
    if compile_only:
        # the local functions (and kernels without `.visible`) first, then the kernels and
        # link targets (each group with the calls within it); -O0 / -Ofc max: the link
        # targets and `.visible` kernels as defined, then the others as declared
        # (codegen._compile_order and its -O0 positions)
        linked = {f.name for f in module.functions() if {".visible", ".weak"} & set(f.linkage)}
        named_first = [n for n in dict.fromkeys(f.name for f in module.functions()) if n in graph]
        own = [n for n in named_first if n not in linked and (n in funcs or n in entries)]
        if unoptimised:
            defined = [n for n in dict.fromkeys(f.name for f in module.functions() if f.body is not None)
                       if n in linked]
            return defined + own, {}
        return (call_postorder(own, graph)
                + call_postorder([n for n in named_first if n in linked], graph)), {}
    after = {}
    taken = None
    for entry in (f.name for f in module.functions() if f.kind == ".entry" and f.name in graph):
        reached, work = set(), list(graph[entry])
        while work:
            n = work.pop()
            if n not in named:              # a register: a call through a pointer
                taken = address_taken_functions(module) if taken is None else taken
                work.extend(t for t in taken if t not in reached)
            elif n in graph and n not in reached and n in funcs:
                reached.add(n)
                work.extend(graph[n])
        after[entry] = sorted(reached)
    return [], after


def resource_lines(cubin: bytes, arch: str, spills: dict | None = None,
                   times: dict | None = None,
                   functions: tuple[list[str], dict[str, list[str]]] = ([], {}),
                   own_frames: dict | None = None) -> list[str]:
    """ptxas's -v lines (without `ptxas info    : `) for a cubin, from its bytes and the
    back end's spill figures (`spills`: kernel -> (store bytes, load bytes); a cubin does
    not record them, so 0 without) and, with `times` (kernel -> ms), each kernel's
    `Compile time` line. `functions` (`function_report_order`) places the `.func`s'
    `Function properties` lines; one we inlined has no frame of its own (0 bytes).
    `own_frames` (function -> bytes): a kernel's own frame, where its FRAME_SIZE record also
    counts the calls below it, and the frames of the functions kept out of line inside a
    kernel's text (the cubin's records without)."""
    from ptx2sass.encoder.arch import target
    from ptx2sass.encoder.cubin import read_cubin, NOBITS_TYPES

    c = read_cubin(cubin)
    info = target(_real_arch(arch))
    frames = {k.name: k.frame_size for k in c.kernels if not k.is_entry}
    frames.update({name: size for name, size in (own_frames or {}).items() if name not in frames})

    def function_lines(name: str, timed: bool) -> list[str]:
        stores, loads = (spills or {}).get(name, (0, 0))
        out = [f"Function properties for {name}",
               f"    {frames.get(name, 0)} bytes stack frame, {stores} bytes spill stores, "
               f"{loads} bytes spill loads"]
        if timed and times is not None:
            out.append(f"Compile time = {times.get(name, 0.0):.3f} ms")
        return out

    def size(name: str) -> int | None:
        try:
            s = c.section(name)
        except KeyError:
            return None
        return s.nobits_size if s.type in NOBITS_TYPES else len(s.data)

    gmem = sum(size(n) or 0 for n in (".nv.global", ".nv.global.init"))
    module = f"{gmem} bytes gmem"
    for bank in range(1, 18) if info.verbose_cmem else ():
        n = size(f".nv.constant{bank}")
        if n:
            module += f", {n} bytes cmem[{bank}]"

    def entry_lines(k) -> list[str]:
        """An entry's lines, then those of the functions reported after it."""
        lines = [f"Compiling entry function '{k.name}' for '{arch}'", f"Function properties for {k.name}"]
        stores, loads = (spills or {}).get(k.name, (0, 0))
        lines.append(f"    {(own_frames or {}).get(k.name, k.frame_size)} bytes stack frame, "
                     f"{stores} bytes spill stores, "
                     f"{loads} bytes spill loads")
        # -G cubins hold two counts; ptxas reports its REGCOUNT record's.
        record = getattr(k, "regcount_attribute", None)
        regs = k.regcount if record is None else record
        used = f"Used {regs} registers, used {k.barcount} barriers"
        if k.min_stack_size and k.min_stack_size != UNBOUNDED_STACK:
            used += f", {k.min_stack_size} bytes cumulative stack size"
        smem = (k.shared_bytes or 0) - info.reserved_shared_bytes    # the kernel's own
        if smem > 0:
            used += f", {smem} bytes smem"
        if info.verbose_cmem:
            used += f", {len(k.const0 or b'')} bytes cmem[0]"
            if k.const2:
                used += f", {len(k.const2)} bytes cmem[2]"
        lines.append(used)
        if times is not None:
            lines.append(f"Compile time = {times.get(k.name, 0.0):.3f} ms")
        for name in after.get(k.name, ()):
            lines += function_lines(name, timed=False)
        return lines

    lines = [module]
    before, after = functions
    entries = {k.name: k for k in c.kernels if k.is_entry}
    for name in before:
        lines += entry_lines(entries.pop(name)) if name in entries else function_lines(name, timed=True)
    for k in entries.values():
        lines += entry_lines(k)
    return lines


def register_override_lines(module, cubin: bytes, limit: RegisterLimit) -> list[str]:
    """ptxas's `-v` notes on -maxrregcount, one per entry in compile order: it overrides
    the default limit, except where `.maxntid`/`.reqntid` decide the budget (no note) or
    a different `.maxnreg` overrides it in turn."""
    from ptx2sass.encoder.cubin import read_cubin
    directives = {f.name: {d.name: d.args for d in f.directives} for f in module.entries()}
    lines = []
    for k in read_cubin(cubin).kernels:
        if not k.is_entry:
            continue
        given = directives.get(k.name, {})
        if ".maxnreg" in given:
            if int(given[".maxnreg"][0]) != limit.shown:
                lines.append(f"Overriding global maxrregcount {limit.shown} with "
                             f"entry-specific value {given['.maxnreg'][0]} of .maxnreg")
        elif ".maxntid" not in given and ".reqntid" not in given:
            lines.append(f"Overriding maximum register limit {DEFAULT_REGISTER_LIMIT} for "
                         f"'{k.name}' with  {limit.shown} of maxrregcount option")
    return lines


DEFAULT_REGISTER_LIMIT = 256   # what ptxas's -v says -maxrregcount overrides


# The command ------------------------------------------------------------------------------

def _entry_names(module) -> list[str]:
    return [item.name for item in module.items
            if getattr(item, "kind", None) == ".entry" and getattr(item, "body", None)]


def _select_entries(module, names: list[str]) -> None:
    """--entry in a whole program (ptxas 13.5.37 keeps every function under -c and -g): only
    the named kernels are compiled, in the order named (the cubin lists them last-named
    first, as it lists a module's kernels); the functions only the others call go with them."""
    slots = [i for i, item in enumerate(module.items)
             if getattr(item, "kind", None) == ".entry" and getattr(item, "body", None)]
    by_name = {module.items[i].name: module.items[i] for i in slots}
    chosen = [by_name[n] for n in names if n in by_name]
    for i, item in zip(slots, chosen):
        module.items[i] = item
    dropped = set(slots[len(chosen):])
    module.items = [item for i, item in enumerate(module.items) if i not in dropped]


def _compile(cl: CommandLine, report: Reporter) -> int:
    arch = cl.get("gpu-name", opt.DEFAULT_GPU_NAME)
    maxrregcount = _check_options(cl, arch, report)
    if report.failed:
        return report.fatal(ABORTED)
    modules = _read_inputs(cl, report)
    if modules is None:
        return EXIT_ERROR
    filename, text = modules[0]

    started = time.perf_counter()
    from ptx2sass import frontend
    from ptx2sass.frontend.ast import join_modules
    try:
        parsed = [_parse_or_error(frontend, source, name, len(modules))
                  for name, source in modules]
        diagnostics = frontend.check(parsed, _real_arch(arch),
                                     whole_program=not cl.flag("compile-only"),
                                     double_use=report.werror if cl.flag(
                                         "warn-on-double-precision-use") else None,
                                     debug=cl.flag("device-debug") or any(
                                         _targets_debug(m) for m in parsed),
                                     werror=report.werror)
    except CompileError as err:
        return _report_errors(err, report)
    module = join_modules(parsed)
    for d in diagnostics or ():
        report.diagnostic(d)
    if not cl.flag("device-debug") and cl.flag("suppress-debug-info") \
            and not cl.flag("generate-line-info") and not _implies_debug_information(module):
        report.warning("Option suppress-debug-info requires option device-debug or lineinfo; "
                       "ignoring since latter is not specified")
    from ptx2sass.frontend.usage_warnings import module_opcodes
    opcodes = module_opcodes(module)      # (the rules below skip modules without theirs)
    if not cl.flag("suppress-sparse-mma-advisory-info"):
        from ptx2sass.frontend.usage_warnings import sparse_mma_advisories
        for d in sparse_mma_advisories(module, opcodes):
            report.info_at(d)
    if not cl.flag("suppress-async-bulk-multicast-advisory-warning"):
        from ptx2sass.frontend.usage_warnings import bulk_multicast_advisories
        target = module.target.names[0] if module.target is not None and module.target.names else None
        for d in bulk_multicast_advisories(module, target, opcodes):
            report.diagnostic(d)
    from ptx2sass.frontend.usage_warnings import setmaxnreg_advisories
    for d in setmaxnreg_advisories(module, opcodes):
        report.info(d.message)
    from ptx2sass.frontend.usage_warnings import wgmma_wait_injections
    for d in wgmma_wait_injections(module, opcodes):
        report.info(d.message)
    _target_option_messages(cl, module, report)
    if cl.flag("warn-on-double-precision-use"):
        from ptx2sass.frontend.usage_warnings import double_precision_warnings
        for d in double_precision_warnings(module, as_errors=report.werror):
            report.diagnostic(d)
    if report.failed:
        return report.fatal(ABORTED)

    known = _entry_names(module)
    for name in dict.fromkeys(cl.get("entry") or ()):
        if name not in known and not _is_virtual(arch):
            return report.fatal(f"Unknown function {name}")
    if cl.get("entry") and not cl.flag("compile-only") and not _targets_debug(module) \
            and not cl.flag("device-debug"):
        _select_entries(module, list(dict.fromkeys(cl.get("entry"))))

    if cl.flag(DUMP_IR.name):
        from ptx2sass import ir
        from ptx2sass.frontend.to_ssa import lower_module
        try:
            dump = ir.dump_module(lower_module(module))
        except CompileError as err:
            return _report_errors(err, report)
        sys.stdout.write(dump if dump.endswith("\n") else dump + "\n")
        return EXIT_OK

    if _is_virtual(arch):
        return EXIT_OK     # a virtual target only checks the PTX, as ptxas does
    if cl.flag("device-debug") or (module.target is not None and "debug" in module.target.names):
        _debug_section_warnings(module, report)        # `.target debug` is -g to ptxas
        if report.failed:
            return report.fatal(ABORTED)
    _apply_launch_bounds(module, cl, report)
    _warn_unfit_minnctapersm(module, arch, report)
    if report.failed:
        return report.fatal(ABORTED)
    if not cl.flag("compile-only"):
        for name in _unresolved_extern_variables(module):
            report.warning(f"Unresolved extern variable '{name}' in whole program compilation, "
                           "ignoring extern qualifier")
        if report.failed:
            return report.fatal(ABORTED)

    if cl.get("sanitize") == SANITIZER_NOT_WRITTEN:
        # ptxas instruments every memory access for compute-sanitizer (24 -> 1224 instructions
        # in a small kernel); uninstrumented code would pass for checked code
        return report.fatal(f"Value '{SANITIZER_NOT_WRITTEN}' of option 'sanitize' is not supported "
                            "in this build of ptx2sass (no memcheck instrumentation)")
    generate = _code_generator()
    if generate is None:
        return report.fatal("code generation is not available in this build of ptx2sass")
    options = _accepted_subset(generate, _codegen_options(cl, maxrregcount, filename, module,
                                                          modules[-1][1]))
    try:
        cubin = generate(text, arch, **options)
    except CompileError as err:
        return _report_errors(err, report)
    if not isinstance(cubin, (bytes, bytearray)):
        raise TypeError(f"the code generator returned {type(cubin).__name__}, not bytes")
    if (module.has_calls() or "alloca" in text or "stackrestore" in text) and not cl.flag("suppress-stack-size-warning"):
        keeps_functions = cl.flag("device-debug") or (module.target is not None and "debug" in module.target.names)
        for name in _unknown_stack_kernels(bytes(cubin)):
            for _ in range(_recursive_callees(module, name) if keeps_functions else 1):
                report.warning(f"Stack size for entry function '{name}' cannot be "
                               "statically determined")
    if cl.flag("warn-on-local-memory-usage"):
        for name, frame in _local_memory_frames(bytes(cubin), options.get("frame_report")):
            report.warning(f"Local memory used for function '{name}', size of stack frame: "
                           f"{frame} bytes")
        if report.failed:
            return EXIT_ERROR        # ptxas stops here without its closing line
    spills = options.get("spill_report") or {}
    if cl.flag("warn-on-spills"):
        for name, (stores, loads) in spills.items():
            if stores or loads:
                report.warning(f"Registers are spilled to local memory in function '{name}', "
                               f"{stores} bytes spill stores, {loads} bytes spill loads")
    if report.failed:
        return report.fatal(ABORTED)

    if cl.flag("verbose") or cl.flag("verbose2"):
        lines = _verbose_lines(cubin, arch, module, maxrregcount, options, started)
        if cl.flag("verbose2"):
            from ptx2sass.codegen import keeps_functions
            lines = processing_lines(lines, module, bool(options.get("compile_only"))
                                     or keeps_functions(module, options)) + lines
        for text_line in lines:
            if text_line.startswith("    "):
                report.line(text_line)
            else:
                report.info(text_line)

    output = cl.get("output-file", "elf.o")
    from ptx2sass.output_file import write_output
    try:
        write_output(output, bytes(cubin))
    except OSError:
        return report.fatal(f"Output file '{output}' could not be opened")
    return EXIT_OK


def _verbose_lines(cubin, arch: str, module, limit: RegisterLimit | None, options: dict,
                   started: float) -> list[str]:
    """`-v`'s lines: the -maxrregcount notes, then the resource report with each kernel's
    compile time (the first kernel's including the module's shared work, as ptxas's
    first line does)."""
    from ptx2sass.encoder.cubin import read_cubin
    times = dict(options.get("time_report") or {})
    elapsed = (time.perf_counter() - started) * 1000
    from ptx2sass.codegen import is_debug
    functions = function_report_order(module, bool(options.get("compile_only")), is_debug(module, options),
                                      options.get("fast_compile"),
                                      int(options.get("opt_level", 3)) == 0 or options.get("fast_compile") == "max")
    first = next((k.name for k in read_cubin(bytes(cubin)).kernels if k.is_entry), None)
    first = functions[0][0] if functions[0] else first
    if first is not None:
        times[first] = times.get(first, 0.0) + max(0.0, elapsed - sum(times.values()))
    lines = register_override_lines(module, bytes(cubin), limit) if limit else []
    return lines + resource_lines(bytes(cubin), arch, options.get("spill_report") or {}, times,
                                  functions, options.get("frame_report"))


def processing_lines(verbose: list[str], module, separate: bool) -> list[str]:
    """-v2's "Processing" line per function ptxas compiles on its own, in -v's order:
    every function where they stay out of line (-c, -g), else the entries only."""
    entries = {f.name for f in module.functions() if f.kind == ".entry"}
    names = [m.group(1) for m in map(re.compile(r"Function properties for (.+)$").match, verbose)
             if m]
    return [f"Processing {n}" for n in names if separate or n in entries]


def run(argv: list[str]) -> int:
    """The command without the safety net (tests call main)."""
    if argv[:1] == ["diff"]:
        # `ptx2sass diff FILE.ptx`: ours against ptxas in the emulator (ptx2sass.fuzz.diff);
        # a PTX file literally named `diff` is compiled as `ptx2sass ./diff`
        from ptx2sass.fuzz.diff import main as diff_main
        return diff_main(argv[1:])
    cl = parse_command_line(argv)
    if cl.flag("help"):
        sys.stdout.write(help_text())
        return EXIT_OK
    if cl.flag("version"):
        sys.stdout.write(version_text())
        return EXIT_OK
    if cl.flag("list-arch"):
        sys.stdout.write(list_arch_text())
        return EXIT_OK
    if cl.flag("list-version"):
        sys.stdout.write("".join(f"{v}\n" for v in opt.PTX_ISA_VERSIONS))
        return EXIT_OK
    report = Reporter(cl)
    for w in cl.warnings:
        report.warning(w, promote=False)
    if not cl.inputs and not cl.get("input-as-string"):
        sys.stdout.write(help_text())
        return EXIT_OK
    if cl.get("gpu-name") in opt.UNSUPPORTED_GPU_NAMES:
        raise UsageError(f"Unsupported gpu architecture '{cl.get('gpu-name')}'")
    return _compile(cl, report)


def _local_memory_frames(cubin: bytes, own_frames: dict | None = None) -> list[tuple[str, int]]:
    """(function, stack frame bytes) for each function of the cubin with a frame (a
    kernel's FRAME_SIZE record, calls below it counted, as ptxas's warning says), then
    the functions kept out of line inside kernels' text (`own_frames`)."""
    from ptx2sass.encoder.cubin import read_cubin
    kernels = read_cubin(cubin).kernels
    listed = {k.name for k in kernels}
    return [(k.name, k.frame_size) for k in kernels if k.frame_size] + \
        [(name, size) for name, size in (own_frames or {}).items() if size and name not in listed]


def _unknown_stack_kernels(cubin: bytes) -> list[str]:
    """Kernels whose stack ptxas cannot bound (recursion, alloca): it warns about each. Only
    modules with `.func`s or `alloca` can have them, so others skip reading the cubin back (and importing
    pyelftools: a fifth of a small compile's time)."""
    from ptx2sass.abi import UNKNOWN_STACK_SIZE
    from ptx2sass.encoder.cubin import read_cubin
    return [k.name for k in reversed(read_cubin(cubin).kernels)
            if k.is_entry and k.min_stack_size == UNKNOWN_STACK_SIZE]


def _recursive_callees(module, kernel: str) -> int:
    """How many times ptxas -g warns about a kernel's unknowable stack: once for each
    function it calls (by name, each once) from which a chain of calls comes back on itself
    (-g keeps every `.func` out of line; measured with self- and mutually recursive
    callees); at least once (alloca)."""
    from ptx2sass.inline import call_graph
    graph = call_graph(module)

    def recurses(start: str) -> bool:
        # iterative search for a cycle reachable from start (colours: 1 on the path, 2 done)
        colour: dict[str, int] = {}
        stack = [(start, iter(graph.get(start, ())))]
        colour[start] = 1
        while stack:
            name, rest = stack[-1]
            nxt = next(rest, None)
            if nxt is None:
                colour[name] = 2
                stack.pop()
            elif colour.get(nxt) == 1:
                return True
            elif nxt not in colour and nxt in graph:
                colour[nxt] = 1
                stack.append((nxt, iter(graph[nxt])))
        return False

    return max(1, sum(1 for callee in graph.get(kernel, ()) if recurses(callee)))


def console() -> None:
    """The `ptx2sass` program (console script and `python -m ptx2sass`): `main`, then the
    process ends without the interpreter's teardown. With the cycle collector off during
    the compile, teardown's final collection frees every object the compile made, one by
    one: a quarter of the time of a 40,000-statement compile (bench/memory_scaling.py's
    line:40000: 1.20 -> 0.94 s CPU). Everything the command writes is written and closed
    by then; the standard streams are flushed here."""
    status = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):       # a closed pipe: nothing more can be told
        status = status or EXIT_ERROR
    os._exit(0 if status is None else status if isinstance(status, int) else EXIT_ERROR)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `ptx2sass` console script: exit status, never a traceback.
    The cycle collector is off meanwhile: a compile's objects live until it ends, and its
    passes over them cost ~7% of a large compile while freeing next to nothing (peak
    memory of the corpora's largest files is the same with it off)."""
    if argv is None:
        argv = sys.argv[1:]
    collecting = gc.isenabled()
    gc.disable()
    try:
        return run(list(argv))
    except UsageError as err:
        sys.stderr.write(f"{program_name()} {format_diagnostic(str(err), None, None, 'fatal')}\n")
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    except MemoryError:
        pass        # reported below, once the exception and the frames it holds are gone
    except Exception as err:  # noqa: BLE001 - the safety net: one line, no traceback
        if os.environ.get(DEBUG_ENV):
            import traceback
            traceback.print_exc()
        what = f"{type(err).__name__}: {err}" if str(err) else type(err).__name__
        sys.stderr.write(f"{program_name()} fatal   : internal error: {what} "
                         f"(set {DEBUG_ENV}=1 for a traceback)\n")
        return EXIT_ERROR
    finally:
        if collecting:
            gc.enable()
    # ptxas's two lines when an allocation fails, written once the compile's objects (cycles
    # among them: the collector is off) are freed, so that writing them cannot fail too
    gc.collect()
    name = program_name()
    sys.stderr.write(f"{name} {format_diagnostic(OUT_OF_MEMORY, None, None, 'fatal')}\n"
                     f"{name} {format_diagnostic(ABORTED, None, None, 'fatal')}\n")
    return EXIT_ERROR
