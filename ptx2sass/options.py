"""ptxas's command-line options, as data: the `ptx2sass` command accepts exactly this set.

Each option has ptxas's long name (spelled `--name` on the command line) and its alias
(spelled `-alias`), the kind of value it takes, the values it allows and its default, all
as the pinned ptxas 13.5 lists them in `ptxas --help`. The help text is our own wording.
`effect` says what ptx2sass does with it: "used" options change what we do; "accepted"
options only tune ptxas's own optimiser or tooling and are taken and ignored, so that build
systems that pass them keep working.

How ptxas reads a command line (measured, and reproduced by `ptx2sass.cli`):
- one leading dash is dropped and the rest is matched against `-long` and `alias`, so
  `--gpu-name` and `-arch` name one option but `-gpu-name` and `--arch` are unknown;
- a value follows as `name=value` or as the next argument; single-letter numeric aliases
  (`-O3`, `-m64`) also take it glued on, and a bare `-O` changes nothing;
- list options (`--entry a,b`) split at commas (PTX given with --input-as-string does
  not) and accumulate when repeated; any other
  option given twice with different values keeps the last and warns.
"""
from __future__ import annotations

# Value kinds.
FLAG = "flag"          # no value
BOOL = "bool"          # true | false
NUMBER = "number"      # a decimal integer
STRING = "string"      # free text, checked against `values` when given
LIST = "list"          # comma-separated strings; repeats accumulate

USED = "used"
ACCEPTED = "accepted"  # taken and ignored: tunes ptxas internals only


class Option:
    """One option. A plain class, not a dataclass: `--version` must not pay for importing
    `dataclasses` (and `inspect`) at start-up."""
    __slots__ = ("name", "alias", "kind", "help", "placeholder", "values", "default",
                 "effect", "glued", "optional_value", "split_commas", "hidden")

    def __init__(self, name: str, alias: str, kind: str, help: str, placeholder: str = "",
                 values: tuple[str, ...] = (), default: str | None = None,
                 effect: str = USED, glued: bool = False, optional_value: bool = False,
                 split_commas: bool = True, hidden: bool = False):
        self.name = name                    # long name without dashes: "gpu-name"
        self.alias = alias                  # alias without its dash: "arch"
        self.kind = kind
        self.help = help
        self.placeholder = placeholder      # shown in --help: "<gpu name>"
        self.values = values                # allowed values, when ptxas restricts them
        self.default = default
        self.effect = effect
        self.glued = glued                  # the alias takes its value glued on: -O3, -m64
        self.optional_value = optional_value  # the alias may stand alone, changing nothing
        self.split_commas = split_commas    # a LIST value holds several items (not PTX text)
        self.hidden = hidden                # taken, but left out of --help as ptxas does

    @property
    def takes_value(self) -> bool:
        return self.kind != FLAG

    def __repr__(self) -> str:
        return f"Option({self.name!r}, {self.alias!r}, {self.kind!r})"


def _gpu_names() -> tuple[str, ...]:
    """The targets ptxas 13.5 lists for --gpu-name, in its (sorted) order."""
    families = {"75": "", "80": "", "86": "", "87": "", "88": "", "89": "", "90": "a",
                "100": "af", "103": "af", "107": "af", "110": "af", "120": "af", "121": "af"}
    names = []
    for prefix in ("compute", "lto", "sm"):
        for sm, suffixes in families.items():
            names.append(f"{prefix}_{sm}")
            names.extend(f"{prefix}_{sm}{s}" for s in suffixes)
    return tuple(sorted(names))


GPU_NAMES = _gpu_names()
DEFAULT_GPU_NAME = "sm_75"
# Listed among --gpu-name's values, but refused once there is something to compile
# ("Unsupported gpu architecture"): the architecture-specific LTO targets.
UNSUPPORTED_GPU_NAMES = tuple(n for n in GPU_NAMES if n.startswith("lto_") and n.endswith("a"))

OPTIONS: tuple[Option, ...] = (
    Option("Ofast-compile", "Ofc", STRING,
           "Trade code quality for compile speed: '0' (off), 'min', 'mid' or 'max'.",
           "<0|min|mid|max>", default="0", effect=ACCEPTED),
    Option("allow-expensive-optimizations", "allow-expensive-optimizations", BOOL,
           "Let the optimiser spend more memory and time (ptxas enables it from -O2).",
           "<true|false>", effect=ACCEPTED),
    Option("apply-controls", "apply-controls", STRING,
           "Read compiler-component controls from the given file.", effect=ACCEPTED),
    Option("compile-as-tools-patch", "astoolspatch", FLAG,
           "Build patch code for CUDA tools, with the ABI's minimum register budget.",
           effect=ACCEPTED),
    Option("compile-only", "c", FLAG,
           "Write a relocatable object: functions may stay unresolved externs."),
    Option("compiler-annotations", "annotate", FLAG,
           "Record compiler-internal notes in the output.", effect=ACCEPTED),
    Option("def-load-cache", "dlcm", STRING,
           "Cache operator for global/generic loads that name none.", effect=USED),
    Option("def-store-cache", "dscm", STRING,
           "Cache operator for global/generic stores that name none.", effect=USED),
    Option("device-debug", "g", FLAG, "Emit debug information for the device code."),
    Option("device-function-maxrregcount", "func-maxrregcount", STRING,
           "With -c: register budget for non-entry functions (overrides -maxrregcount "
           "for them); ignored in whole-program mode.", "<archmax/archmin/N>",
           effect=ACCEPTED),
    Option("device-stack-protector", "device-stack-protector", BOOL,
           "Guard risky stack frames with canaries.", "<true|false>", default="false",
           effect=ACCEPTED),
    Option("disable-optimizer-constants", "disable-optimizer-consts", FLAG,
           "Do not use the optimiser's constant bank.", effect=ACCEPTED),
    Option("disable-warnings", "w", FLAG, "Print no warnings."),
    Option("dont-merge-basicblocks", "no-bb-merge", FLAG,
           "Keep consecutive basic blocks apart (easier debugging).", effect=ACCEPTED),
    Option("enable-func-clone-sc", "enable-func-clone-sc", BOOL,
           "With -c: clone module-local functions into each calling entry.",
           "<true|false>", default="false", effect=ACCEPTED),
    Option("entry", "e", LIST, "Compile only the named entry functions.",
           "<entry function>,..."),
    Option("extensible-whole-program", "ewp", FLAG,
           "Extensible whole-program mode.", effect=ACCEPTED),
    Option("fmad", "fmad", BOOL,
           "Allow (true) or forbid (false) contracting a multiply and an add into one "
           "fused multiply-add.", "<true|false>", default="true"),
    Option("force-load-cache", "flcm", STRING,
           "Cache operator forced on every global/generic load.", effect=USED),
    Option("force-store-cache", "fscm", STRING,
           "Cache operator forced on every global/generic store.", effect=USED),
    Option("g-tensor-memory-access-check", "g-tmem-access-check", FLAG,
           "Check tcgen05 tensor-memory accesses (on by default with -g).", effect=ACCEPTED),
    Option("generate-line-info", "lineinfo", FLAG,
           "Emit line-number information for the device code."),
    Option("gno-fabric-access-check", "gno-fabric-access-check", FLAG,
           "Do not check fabric accesses.", effect=ACCEPTED),
    Option("gno-tensor-memory-access-check", "gno-tmem-access-check", FLAG,
           "Do not check tcgen05 tensor-memory accesses (wins over the option above).",
           effect=ACCEPTED),
    Option("gpu-name", "arch", STRING,
           "The GPU to generate code for. A virtual target (compute_XX, lto_XX) only "
           "parses and checks the PTX and writes nothing. PTX for .target sm_XY compiles "
           "for any sm_MN with MN >= XY.", "<gpu name>", values=GPU_NAMES,
           default=DEFAULT_GPU_NAME),
    Option("help", "h", FLAG, "Print this list of options."),
    Option("input-as-string", "ias", LIST,
           "Take PTX modules as strings on the command line instead of files.",
           "<ptx string>,...", split_commas=False),
    Option("jobserver", "jobserver", FLAG,
           "Cooperate with a GNU make jobserver.", effect=ACCEPTED),
    Option("legacy-bar-warp-wide-behavior", "legacy-bar-warp-wide-behavior", FLAG,
           "Deprecated: pre-sm_70 warp-wide `bar` semantics.", effect=ACCEPTED),
    Option("list-arch", "arch-ls", FLAG, "Print the GPU architectures supported."),
    Option("list-version", "version-ls", FLAG, "Print the PTX ISA versions supported."),
    Option("machine", "m", NUMBER, "Host address width; only 64 exists.", "<bits>",
           values=("64",), default="64", glued=True),
    Option("make-errors-visible-at-exit", "make-errors-visible-at-exit", FLAG,
           "Add code at exits so that memory faults surface there.", effect=USED),
    Option("maxntid", "maxntid", LIST,
           "Assumed block size limit for entries without .maxntid (ignored with "
           "-maxrregcount).", "<Comma separated list of numbers>,...", effect=USED),
    Option("maxrregcount", "maxrregcount", STRING,
           "Upper bound on registers per thread for every function; 'archmax' and "
           "'archmin' name the target's limits. Unset: no bound.", "<archmax/archmin/N>"),
    Option("minnctapersm", "minnctapersm", NUMBER,
           "Assumed minimum resident blocks per SM for entries without .minnctapersm.",
           "<N>", effect=USED),
    Option("opt-level", "O", NUMBER, "Optimisation level.", "<N>", default="3",
           glued=True, optional_value=True),
    Option("optimize-float-atomics", "opt-fp-atomics", FLAG,
           "Allow floating-point atomic optimisations that may change rounding.",
           effect=ACCEPTED),
    Option("options-file", "optf", LIST,
           "Read further command-line options from the given files.", "<file>,..."),
    Option("output-file", "o", STRING, "Where to write the cubin.", "<file>",
           default="elf.o"),
    Option("override-directive-values", "override-directive-values", FLAG,
           "Let -minnctapersm, -maxntid and -maxrregcount win over the PTX directives.",
           effect=USED),
    Option("position-independent-code", "pic", BOOL,
           "Deprecated and without effect.", "<true|false>", default="false",
           effect=ACCEPTED),
    Option("preserve-relocs", "preserve-relocs", FLAG,
           "Keep relocations for variable references in the linked output.",
           effect=ACCEPTED),
    Option("regAllocOptLevel", "regAllocOptLevel", NUMBER,
           "Register allocator effort (an option ptxas leaves out of its --help; Triton "
           "passes --regAllocOptLevel=2 on every compile).", "<N>", effect=ACCEPTED,
           hidden=True),
    Option("register-usage-level", "regUsageLevel", NUMBER,
           "0..10: how freely optimisations may spend registers.", "<0..10>",
           default="5", effect=ACCEPTED),
    Option("return-at-end", "ret-end", FLAG,
           "Keep the final return instruction (debugging).", effect=ACCEPTED),
    Option("sanitize", "sanitize", STRING, "Instrument the code for a sanitizer tool "
           "(memcheck: refused, its instrumentation is not written; threadsteer: ptxas's code "
           "is unchanged).", "<string>", values=("memcheck", "threadsteer"), effect=ACCEPTED),
    Option("sp-bounds-check", "sp-bounds-check", FLAG,
           "Check the stack pointer against its bounds.", effect=ACCEPTED),
    Option("split-compile", "split-compile", NUMBER,
           "Threads ptxas may use for its optimiser.", "<N>", effect=ACCEPTED),
    Option("suppress-async-bulk-multicast-advisory-warning",
           "suppress-async-bulk-multicast-advisory-warning", FLAG,
           "Silence the .multicast::cluster advisory.", effect=ACCEPTED),
    Option("suppress-debug-info", "suppress-debug-info", FLAG,
           "Leave debug sections out of the output (with -g or -lineinfo)."),
    Option("suppress-double-demote-warning", "suppress-double-demote-warning", FLAG,
           "Silence the warning for double precision on targets without it.",
           effect=ACCEPTED),
    Option("suppress-position-independent-code-warning",
           "suppress-position-independent-code-warning", FLAG,
           "Silence the warning for the deprecated -pic option.", effect=USED),
    Option("suppress-sparse-mma-advisory-info", "suppress-sparse-mma-advisory-info", FLAG,
           "Silence the mma.sp advisory.", effect=USED),
    Option("suppress-stack-size-warning", "suppress-stack-size-warning", FLAG,
           "Silence the warning for a stack size that cannot be bounded.", effect=USED),
    Option("uniform-datapath", "uniform-datapath", BOOL,
           "Compute values the whole warp shares in uniform registers "
           "(default: true on sm_90 and later, false on sm_80..sm_89; not a ptxas option: "
           "for A/B measurements).", "<true|false>",
           hidden=True),
    Option("verbose", "v", FLAG,
           "Print each function's resource use (registers, barriers, memory)."),
    Option("verbose2", "v2", FLAG, "Like -v, also naming each function as it starts."),
    Option("version", "V", FLAG, "Print the version of this tool."),
    Option("warn-on-double-precision-use", "warn-double-usage", FLAG,
           "Warn when an instruction uses doubles.", effect=USED),
    Option("warn-on-local-memory-usage", "warn-lmem-usage", FLAG,
           "Warn when local memory is used.", effect=USED),
    Option("warn-on-spills", "warn-spills", FLAG,
           "Warn when registers spill to local memory."),
    Option("warning-as-error", "Werror", FLAG, "Treat every warning as an error."),
)

BY_LONG: dict[str, Option] = {o.name: o for o in OPTIONS}
BY_ALIAS: dict[str, Option] = {o.alias: o for o in OPTIONS}
INPUT_STRING_NAME = "application ptx input"   # how diagnostics name --input-as-string PTX

# Late checks ptxas makes on some values (after the command line is read).
CACHE_OPERATORS = {"def-load-cache": ("ca", "cg", "cs", "lu", "cv"),
                   "force-load-cache": ("ca", "cg", "cs", "lu", "cv"),
                   "def-store-cache": ("wb", "cg", "cs", "wt"),
                   "force-store-cache": ("wb", "cg", "cs", "wt")}
FAST_COMPILE_LEVELS = ("max", "mid", "min", "0")
REGISTER_USAGE_LEVELS = range(0, 11)
MIN_REGISTERS = 24        # ptxas raises a smaller -maxrregcount to this, for every sm_7x+
LTO_MIN_REGISTERS = 16    # ... and to this for an lto_ target (where any other number is "too big")
ARCHMIN_REGISTERS = 32    # what `-maxrregcount archmin` means to ptxas 13.5 (sm_75..sm_120)

# What --list-arch and --list-version print (ptxas 13.5's lists, in its order).
LISTED_ARCHS = (75, 80, 86, 87, 88, 89, 90, 100, 110, 103, 120, 121, 107)
PTX_ISA_VERSIONS = tuple(
    "1.0 1.1 1.2 1.3 1.4 1.5 2.0 2.1 2.2 2.3 3.0 3.1 3.2 4.0 4.1 4.2 4.3 5.0 5.1 6.0 6.1 "
    "6.2 6.3 6.4 6.5 7.0 7.1 7.2 7.3 7.4 7.5 7.6 7.7 7.8 8.0 8.1 8.2 8.3 8.4 8.5 8.6 8.7 "
    "8.8 9.0 9.1 9.2 9.3 9.4 9.5".split())
