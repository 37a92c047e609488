"""PTX instruction forms, as data (following the PTX ISA manual, up to ISA 9.x).

Each line of FORMS is one form of one instruction:

    opcode  groups...  : operands

groups
    `[.a .b]`    optional modifier, at most one of the listed spellings
    `{.a .b}`    required modifier, exactly one of them
    `<.u32 .s32>` a type slot: the instruction's Nth type modifier must be one of these
                 (`$name` expands a type set from TYPE_SETS below)
operands (comma separated)
    d  dN  d:T   destination register typed by slot 0 / slot N / fixed type T
    a  aN  a:T   source: register, immediate or (for mov/cvta) a symbol's address
    p            predicate destination (also `p|q`, and `_`)
    q            predicate source (`p`, `!p`, or an integer immediate)
    dp           destination, optionally paired with a predicate (`d|p`)
    d:wide       destination twice as wide as slot 0 (mul.wide)
    m            memory address `[reg+imm]`, `[sym+imm]`, `[imm]`
    V / W        ld-style destination / st-style source: a `{...}` vector when the
                 instruction has `.v2/.v4/.v8`, else a scalar, typed by slot 0
    l            branch target label
    *            anything (not type-checked)
    a trailing `?` makes an operand optional (only at the end of the list)

Instructions in LENIENT_OPCODES are known (so no "unknown instruction" error) but only their
symbols are checked: their modifier and operand grammar is large and regular enough that a
wrong spelling is better left to the later stages' explicit "unsupported" errors.
"""
from __future__ import annotations

from ptx2sass.records import dataclass

TYPE_SETS: dict[str, tuple[str, ...]] = {
    "int": (".u16", ".u32", ".u64", ".s16", ".s32", ".s64"),
    "int32+": (".u32", ".u64", ".s32", ".s64"),
    "u": (".u16", ".u32", ".u64"),
    "s": (".s16", ".s32", ".s64"),
    "bit": (".b16", ".b32", ".b64"),
    "bit+": (".b16", ".b32", ".b64", ".b128"),
    "f": (".f32", ".f64"),
    "half": (".f16", ".f16x2", ".bf16", ".bf16x2"),
    "all": (".b8", ".b16", ".b32", ".b64", ".b128", ".u8", ".u16", ".u32", ".u64", ".s8",
            ".s16", ".s32", ".s64", ".f16", ".f16x2", ".f32", ".f64", ".bf16", ".bf16x2"),
    # what ld/st/ldu take: no half types (those move as .b16/.b32)
    "mem": (".b8", ".b16", ".b32", ".b64", ".b128", ".u8", ".u16", ".u32", ".u64", ".s8",
            ".s16", ".s32", ".s64", ".f32", ".f64"),
    "mov": (".pred", ".b16", ".b32", ".b64", ".b128", ".u16", ".u32", ".u64", ".s16", ".s32",
            ".s64", ".f16", ".f16x2", ".f32", ".f64", ".bf16", ".bf16x2"),
    "cvt": (".u8", ".u16", ".u32", ".u64", ".s8", ".s16", ".s32", ".s64", ".f16", ".f32",
            ".f64", ".bf16"),
    "packed": (".f16x2", ".bf16x2", ".tf32", ".e4m3x2", ".e5m2x2", ".e2m1x2", ".e2m3x2",
               ".e3m2x2", ".ue8m0x2", ".e4m3", ".e5m2", ".e2m1", ".f32x2", ".e4m3x4", ".e5m2x4",
               ".e2m3x4", ".e3m2x4", ".e2m1x4"),
    "cmp_int": (".b16", ".b32", ".b64", ".u16", ".u32", ".u64", ".s16", ".s32", ".s64"),
}

ROUND_F = "[.rn .rz .rm .rp]"
# f16/bf16 add/sub/mul and f16 fma take `.rn` alone (ptxas 13.5.37: "Illegal rounding
# modifier" for the others; bf16 fma takes all four)
CMP_INT = "{.eq .ne .lt .le .gt .ge .lo .ls .hi .hs}"
CMP_F = ("{.eq .ne .lt .le .gt .ge .equ .neu .ltu .leu .gtu .geu .num .nan}")
BOOL = "[.and .or .xor]"
LD_SPACE = "[.global .shared .shared::cta .shared::cluster .local .const .param .param::entry .param::func]"
LD_CACHE = "[.ca .cg .cs .lu .cv]"
ST_CACHE = "[.wb .cg .cs .wt]"
LD_SEM = "[.weak .volatile .relaxed .acquire]"
ST_SEM = "[.weak .volatile .relaxed .release]"
SCOPE = "[.cta .cluster .gpu .sys]"
EVICT = ("[.L1::evict_normal .L1::evict_unchanged .L1::evict_first .L1::evict_last "
         ".L1::no_allocate]")
EVICT2 = "[.L2::evict_normal .L2::evict_first .L2::evict_last]"
L2SIZE = "[.L2::64B .L2::128B .L2::256B]"
HINT = "[.L2::cache_hint]"
VEC = "[.v2 .v4 .v8]"
EVICT_PRIORITY = ("[.L2::evict_last .L2::evict_normal .L2::evict_first .L2::evict_unchanged]")
ATOM_SEM = "[.relaxed .acquire .release .acq_rel]"
ATOM_SPACE = "[.global .shared .shared::cta .shared::cluster .const .local .param]"

_FORM_TEXT = f"""
add   <$int>                                              : d, a, b
add   {{.sat}} <.s32>                                        : d, a, b
add   {{.sat}} <.u32>                                        : d, a, b
add   {{.cc}} <.u32 .s32 .u64 .s64>                           : d, a, b
add   {ROUND_F} [.ftz] [.sat] <.f32>                     : d, a, b
add   {ROUND_F} <.f64>                                    : d, a, b
add   [.rn] [.ftz] [.sat] <.f16 .f16x2>                : d, a, b
add   [.rn] <.bf16 .bf16x2>                           : d, a, b
add   [.sat] <.u16x2 .s16x2>                              : d:b32, a:b32, b:b32
sub   <$int>                                              : d, a, b
sub   {{.sat}} <.s32>                                        : d, a, b
sub   {{.cc}} <.u32 .s32 .u64 .s64>                           : d, a, b
sub   {ROUND_F} [.ftz] [.sat] <.f32>                     : d, a, b
sub   {ROUND_F} <.f64>                                    : d, a, b
sub   [.rn] [.ftz] [.sat] <.f16 .f16x2>                : d, a, b
sub   [.rn] <.bf16 .bf16x2>                           : d, a, b
addc  [.cc] <.u32 .s32 .u64 .s64>                         : d, a, b
subc  [.cc] <.u32 .s32 .u64 .s64>                         : d, a, b
addc  <.u16 .s16>                                         : d, a, b
subc  <.u16 .s16>                                         : d, a, b
addc  {{.sat}} <.s32>                                       : d, a, b
subc  {{.sat}} <.s32>                                       : d, a, b
mul   {{.lo .hi}} <$int>                                   : d, a, b
mul   {{.wide}} <.u16 .u32 .s16 .s32>                      : d:wide, a, b
mul   {ROUND_F} [.ftz] [.sat] <.f32>                     : d, a, b
mul   {ROUND_F} <.f64>                                    : d, a, b
mul   [.rn] [.ftz] [.sat] <.f16 .f16x2>                : d, a, b
mul   [.rn] <.bf16 .bf16x2>                           : d, a, b
mad   {{.lo .hi}} [.cc] <$int>                              : d, a, b, c
mad   {{.hi}} {{.sat}} <.s32>                                : d, a, b, c
mad   {{.wide}} <.u16 .u32 .s16 .s32>                      : d:wide, a, b, c:wide
mad   {ROUND_F} [.ftz] [.sat] <.f32>                     : d, a, b, c
mad   {{.rn .rz .rm .rp}} <.f64>                           : d, a, b, c
madc  {{.lo .hi}} [.cc] <.u32 .s32 .u64 .s64>              : d, a, b, c
madc  {{.lo .hi}} <.u16 .s16>                                : d, a, b, c
madc  {{.hi}} {{.sat}} <.s32>                                : d, a, b, c
mul24 {{.lo .hi}} <.u32 .s32>                              : d, a, b
mad24 {{.lo .hi}} [.sat] <.u32 .s32>                       : d, a, b, c
sad   <$int>                                              : d, a, b, c
div   <$int>                                              : d, a, b
div   {{.approx .full .rn .rz .rm .rp}} [.ftz] <.f32>      : d, a, b
div   {{.rn .rz .rm .rp}} <.f64>                           : d, a, b
rem   <$int>                                              : d, a, b
abs   <.s16 .s32 .s64>                                    : d, a
abs   [.ftz] <.f32>                                       : d, a
abs   <.f64>                                              : d, a
abs   [.ftz] <.f16 .f16x2>                                : d, a
abs   <.bf16 .bf16x2>                                     : d, a
neg   <.s16 .s32 .s64>                                    : d, a
neg   [.ftz] <.f32>                                       : d, a
neg   <.f64>                                              : d, a
neg   [.ftz] <.f16 .f16x2>                                : d, a
neg   <.bf16 .bf16x2>                                     : d, a
min   [.relu] <$int>                                      : d, a, b
min   [.ftz] [.NaN] [.xorsign] [.abs] <.f32>                  : d, a, b, c?
min   <.f64>                                              : d, a, b
min   [.ftz] [.NaN] [.xorsign] [.abs] <.f16 .f16x2 .bf16 .bf16x2> : d, a, b
min   [.relu] <.u16x2 .s16x2>                             : d:b32, a:b32, b:b32
max   [.relu] <$int>                                      : d, a, b
max   [.ftz] [.NaN] [.xorsign] [.abs] <.f32>                  : d, a, b, c?
max   <.f64>                                              : d, a, b
max   [.ftz] [.NaN] [.xorsign] [.abs] <.f16 .f16x2 .bf16 .bf16x2> : d, a, b
max   [.relu] <.u16x2 .s16x2>                             : d:b32, a:b32, b:b32
popc  <.b32 .b64>                                         : d:u32, a
clz   <.b32 .b64>                                         : d:u32, a
bfind [.shiftamt] <.u32 .u64 .s32 .s64>                   : d:u32, a
fns   <.b32>                                              : d, a:b32, b:u32, c:s32
brev  <.b32 .b64>                                         : d, a
bfe   <.u32 .u64 .s32 .s64>                               : d, a, b:u32, c:u32
bfi   <.b32 .b64>                                         : d, a, b, c:u32, e:u32
bmsk  {{.clamp .wrap}} <.b32>                              : d, a:u32, b:u32
szext {{.clamp .wrap}} <.u32 .s32>                         : d, a, b:u32
dp4a  <.u32 .s32> <.u32 .s32>                             : d:s32, a:b32, b:b32, c:s32
dp2a  {{.lo .hi}} <.u32 .s32> <.u32 .s32>                  : d:s32, a:b32, b:b32, c:s32
testp {{.finite .infinite .number .notanumber .normal .subnormal}} <.f32 .f64> : p, a
copysign <.f32 .f64>                                      : d, a, b
fma   {{.rn .rz .rm .rp}} [.ftz] [.sat] <.f32>             : d, a, b, c
fma   {{.rn .rz .rm .rp}} <.f64>                           : d, a, b, c
fma   {{.rn}} [.ftz] [.sat] [.relu] [.oob] <.f16 .f16x2>  : d, a, b, c
fma   {{.rn .rz .rm .rp}} [.relu] [.oob] <.bf16 .bf16x2>     : d, a, b, c
rcp   {{.approx .rn .rz .rm .rp}} [.ftz] <.f32>            : d, a
rcp   {{.approx .rn .rz .rm .rp}} [.ftz] <.f64>            : d, a
sqrt  {{.approx .rn .rz .rm .rp}} [.ftz] <.f32>            : d, a
sqrt  {{.rn .rz .rm .rp}} <.f64>                           : d, a
rsqrt {{.approx}} [.ftz] <.f32 .f64>                       : d, a
sin   {{.approx}} [.ftz] <.f32>                            : d, a
cos   {{.approx}} [.ftz] <.f32>                            : d, a
lg2   {{.approx}} [.ftz] <.f32>                            : d, a
ex2   {{.approx}} [.ftz] <.f32>                            : d, a
ex2   {{.approx}} [.ftz] <.f16 .f16x2 .bf16 .bf16x2>       : d, a
tanh  {{.approx}} <.f32 .f16 .f16x2 .bf16 .bf16x2>         : d, a
set   {CMP_INT} {BOOL} <.u32 .s32 .f32 .f16 .bf16> <$cmp_int>       : d, a1, b1, q?
set   {CMP_F} {BOOL} [.ftz] <.u32 .s32 .f32 .f16> <.f32>       : d, a1, b1, q?
set   {CMP_F} {BOOL} <.u32 .s32 .f32 .f16 .bf16> <.f64>         : d, a1, b1, q?
set   {CMP_F} {BOOL} <.bf16> <.f32>                             : d, a1, b1, q?
set   {CMP_F} {BOOL} [.ftz] <.u16 .u32 .s16 .s32 .f16 .f16x2 .bf16 .bf16x2> <.f16 .f16x2 .bf16 .bf16x2> : d, a1, b1, q?
setp  {CMP_INT} {BOOL} <$cmp_int>                        : p, a, b, q?
setp  {CMP_F} {BOOL} [.ftz] <.f32 .f64>                  : p, a, b, q?
setp  {CMP_F} {BOOL} [.ftz] <.f16 .f16x2 .bf16 .bf16x2>  : p, a, b, q?
selp  <.b16 .b32 .b64 .u16 .u32 .u64 .s16 .s32 .s64 .f32 .f64> : d, a, b, q
slct  [.ftz] <.b16 .b32 .b64 .u16 .u32 .u64 .s16 .s32 .s64 .f32 .f64> <.s32 .f32> : d, a, b, c1
and   <.pred .b16 .b32 .b64>                              : d, a, b
or    <.pred .b16 .b32 .b64>                              : d, a, b
xor   <.pred .b16 .b32 .b64>                              : d, a, b
not   <.pred .b16 .b32 .b64>                              : d, a
cnot  <.b16 .b32 .b64>                                    : d, a
lop3  <.b32>                                              : d, a, b, c, e:b32
lop3  {{.or .and}} <.b32>                                  : dp, a, b, c, e:b32, q
shf   {{.l .r}} {{.clamp .wrap}} <.b32>                     : d, a, b, c:u32
shl   <.b16 .b32 .b64>                                    : d, a, b:u32
shr   <.b16 .b32 .b64 .u16 .u32 .u64 .s16 .s32 .s64>      : d, a, b:u32
mov   <$mov>                                              : d, a
mov   [.v2 .v4] <$mov>                                   : V, W
cvta  [.to] {{.global .shared .shared::cta .shared::cluster .local .const .param .param::entry}} <.u32 .u64> : d, a
cvt   [.rni .rzi .rmi .rpi .rn .rz .rm .rp .rna .rs] [.ftz] [.sat] [.relu] [.satfinite] <$cvt> <$cvt> : d, a1
cvt   [.rn .rz .rm .rp .rna .rs] [.ftz] [.sat] [.relu] [.satfinite] <$packed> <$packed $cvt> : d, *, *?, *?
cvt   [.rn .rz .rm .rp .rna .rs] [.ftz] [.sat] [.relu] [.satfinite] <$cvt> <$packed> : d, *
prmt  [.f4e .b4e .rc8 .ecl .ecr .rc16] <.b32>             : d, a, b, c
ld    [.mmio] {LD_SEM} {SCOPE} {LD_SPACE} [.nc] {LD_CACHE} {EVICT} {EVICT2} {L2SIZE} {HINT} [.unified] {VEC} <$mem> : V, m, *?
ldu   [.global] {VEC} <$mem>                              : V, m
st    [.mmio] {ST_SEM} {SCOPE} {LD_SPACE} {ST_CACHE} {EVICT} {EVICT2} {HINT} {VEC} <$mem> : m, W, *?
bra   [.uni]                                              : l
ret   [.uni]                                              :
exit                                                      :
trap                                                      :
brkpt                                                     :
atom  {ATOM_SEM} {SCOPE} {ATOM_SPACE} {{.and .or .xor}} {HINT} <.b32 .b64> : d, m, a, *?
atom  {ATOM_SEM} {SCOPE} {ATOM_SPACE} {{.exch}} {HINT} <.b32 .b64 .b128> : d, m, a, *?
atom  {ATOM_SEM} {SCOPE} {ATOM_SPACE} {{.add}} {HINT} [.noftz] <.u32 .u64 .s32 .f32 .f64 .f16 .f16x2 .bf16 .bf16x2> : d, m, a, *?
atom  {ATOM_SEM} {SCOPE} {ATOM_SPACE} {{.inc .dec}} {HINT} <.u32> : d, m, a, *?
atom  {ATOM_SEM} {SCOPE} {ATOM_SPACE} {{.min .max}} {HINT} <.u32 .u64 .s32 .s64> : d, m, a, *?
atom  {ATOM_SEM} {SCOPE} {ATOM_SPACE} {{.min .max}} {HINT} [.noftz] <.f16 .f16x2 .bf16 .bf16x2> : d, m, a, *?
atom  {ATOM_SEM} {SCOPE} {ATOM_SPACE} {{.cas}} {HINT} <.b16 .b32 .b64 .b128> : d, m, a, b, *?
atom  {ATOM_SEM} {SCOPE} {ATOM_SPACE} {VEC} {{.add .min .max}} {HINT} [.noftz] <.f16 .f16x2 .bf16 .bf16x2 .f32> : *, m, *, *?
red   {ATOM_SEM} {SCOPE} {ATOM_SPACE} {{.and .or .xor}} {HINT} <.b32 .b64> : m, a, *?
red   {ATOM_SEM} {SCOPE} {ATOM_SPACE} {{.add}} {HINT} [.noftz] <.u32 .u64 .s32 .f32 .f64 .f16 .f16x2 .bf16 .bf16x2> : m, a, *?
red   {ATOM_SEM} {SCOPE} {ATOM_SPACE} {{.inc .dec}} {HINT} <.u32> : m, a, *?
red   {ATOM_SEM} {SCOPE} {ATOM_SPACE} {{.min .max}} {HINT} <.u32 .u64 .s32 .s64> : m, a, *?
red   {ATOM_SEM} {SCOPE} {ATOM_SPACE} {{.min .max}} {HINT} [.noftz] <.f16 .f16x2 .bf16 .bf16x2> : m, a, *?
red   {ATOM_SEM} {SCOPE} {ATOM_SPACE} {VEC} {{.add .min .max}} {HINT} [.noftz] <.f16 .f16x2 .bf16 .bf16x2 .f32> : m, *, *?
shfl  {{.sync}} {{.up .down .bfly .idx}} <.b32>              : dp, a, b:b32, c:b32, e:b32
shfl  {{.up .down .bfly .idx}} <.b32>                       : dp, a, b:b32, c:b32
vote  {{.sync}} {{.all .any .uni}} <.pred>                  : p, q, e:b32
vote  {{.sync}} {{.ballot}} <.b32>                          : d, q, e:b32
vote  {{.all .any .uni}} <.pred>                            : p, q
vote  {{.ballot}} <.b32>                                    : d, q
match {{.any}} {{.sync}} <.b32 .b64>                       : d:b32, a, e:b32
match {{.all}} {{.sync}} <.b32 .b64>                       : *, a, e:b32
redux {{.sync}} {{.add .min .max}} <.u32 .s32>                : d, a, e:b32
redux {{.sync}} {{.and .or .xor}} <.b32>                     : d, a, e:b32
redux {{.sync}} {{.min .max}} [.abs] [.NaN] <.f32>              : d, a, e:b32
bar   [.cta] {{.sync .arrive}} [.aligned]                      : a:u32, b:u32?
bar   [.cta] {{.red}} {{.popc}} [.aligned] <.u32>                : d, a:u32, q
bar   [.cta] {{.red}} {{.popc}} [.aligned] <.u32>                : d, a:u32, b:u32, q
bar   [.cta] {{.red}} {{.and .or}} [.aligned] <.pred>              : p, a:u32, q
bar   [.cta] {{.red}} {{.and .or}} [.aligned] <.pred>              : p, a:u32, b:u32, q
bar   {{.warp}} {{.sync}}                                      : a:u32
barrier [.cta] [.aligned] {{.sync .arrive}}                    : a:u32?, b:u32?
barrier [.cta] [.aligned] {{.red}} {{.popc}} <.u32>              : d, a:u32, q
barrier [.cta] [.aligned] {{.red}} {{.popc}} <.u32>              : d, a:u32, b:u32, q
barrier [.cta] [.aligned] {{.red}} {{.and .or}} <.pred>            : p, a:u32, q
barrier [.cta] [.aligned] {{.red}} {{.and .or}} <.pred>            : p, a:u32, b:u32, q
barrier {{.cluster}} {{.arrive .wait}} [.release .relaxed .acquire] [.aligned] :
membar {{.cta .gl .sys}}                                      :
membar {{.proxy}} {{.alias}}                                    :
isspacep {{.const .global .local .shared .shared::cta .shared::cluster .param .param::entry}} : p, *
add   {ROUND_F} [.ftz] [.sat] <.f32x2>                        : d, a, b
sub   {ROUND_F} [.ftz] [.sat] <.f32x2>                        : d, a, b
mul   {ROUND_F} [.ftz] [.sat] <.f32x2>                        : d, a, b
fma   {{.rn .rz .rm .rp}} [.ftz] [.sat] <.f32x2>               : d, a, b, c
cp    {{.async}} {{.ca .cg}} {{.shared .shared::cta}} {{.global}} {HINT} {L2SIZE} : m, m, a:u32, b:u32?, c:b64?
ldmatrix {{.sync}} {{.aligned}} {{.m8n8}} {{.x1 .x2 .x4}} [.trans] [.shared .shared::cta] <.b16> : V2, m
stmatrix {{.sync}} {{.aligned}} {{.m8n8}} {{.x1 .x2 .x4}} [.trans] [.shared .shared::cta] <.b16> : m, W2
createpolicy {{.fractional}} {EVICT_PRIORITY} {EVICT_PRIORITY} <.b64> : d, a:f32?
createpolicy {{.range}} [.global] {EVICT_PRIORITY} {EVICT_PRIORITY} <.b64> : d, m, a:u32, b:u32
createpolicy {{.cvt}} [.L2] <.b64>                      : d, a
nanosleep <.u32>                                          : a
activemask <.b32>                                         : d
alloca <.u32 .u64>                                        : d, a, *?
stacksave <.u32 .u64>                                     : d
stackrestore <.u32 .u64>                                  : a
"""

# Instructions whose `.cc` takes 32/64-bit integer types alone ("Modifier '.cc' applies only
# to add integer types"; a float add/sub also hears its `.cc` is illegal) and those whose
# unsigned types ptxas names as "applies only to signed numeric types" (ptxas 13.5.37).
CC_OPCODES = frozenset(("add", "sub", "addc", "subc", "mad", "madc"))
CC_TYPES = frozenset((".u32", ".s32", ".u64", ".s64"))
SIGNED_ONLY_OPCODES = frozenset(("abs", "neg"))

# Leniently checked instructions whose type and operand count are still checked (ptxas
# 13.5.37's "Unexpected instruction types specified for ..." / "Arguments mismatch for
# instruction ...", probed on branch reject26; a wrong count crashed the code generator):
# dotted name -> (the types it takes, its operand count).
LENIENT_SHAPES: dict[str, tuple[frozenset, int]] = {
    "mapa": (frozenset((".u32", ".u64")), 3),
    "getctarank": (frozenset((".u32", ".u64")), 2),
    "movmatrix": (frozenset((".b16",)), 2),
    "mbarrier.pending_count": (frozenset((".b64",)), 2),
}

LENIENT_OPCODES = frozenset("""
    red.async fence brx prefetch prefetchu mapa getctarank movmatrix discard
    cp.async.bulk cp.reduce cp.async.mbarrier cp.async.wait_group cp.async.wait_all
    cp.async.commit_group ldmatrix.sync.aligned.m16n16 ldmatrix.sync.aligned.m8n16
    stmatrix.sync.aligned.m16n8
    applypriority tex tld4 txq istypep suld sust sured suq wmma mma wgmma tcgen05 mbarrier
    cvt.pack elect griddepcontrol setmaxnreg clusterlaunchcontrol tensormap multimem
    st.async st.bulk vadd vsub vabsdiff vmin vmax vshl vshr vmad vset vadd2 vsub2 vavrg2
    vabsdiff2 vmin2 vmax2 vset2 vadd4 vsub4 vavrg4 vabsdiff4 vmin4 vmax4 vset4 pmevent
    cvt.pack prefetch.tensormap
""".split())


@dataclass(frozen=True, slots=True)
class Form:
    opcode: str
    groups: tuple[tuple[frozenset, bool], ...]   # (spellings, required)
    type_slots: tuple[frozenset, ...]
    operands: tuple[str, ...]
    optional_from: int                           # operands at/after this index are optional


def _expand_types(body: str) -> frozenset:
    out: list[str] = []
    for word in body.split():
        out.extend(TYPE_SETS[word[1:]] if word.startswith("$") else (word,))
    return frozenset(out)


def _parse_form(head: str, ops: str) -> Form:
    opcode, *rest = head.split(None, 1)
    rest_text = rest[0] if rest else ""
    groups, slots = [], []
    i = 0
    while i < len(rest_text):
        ch = rest_text[i]
        if ch in "[{<":
            close = {"[": "]", "{": "}", "<": ">"}[ch]
            j = rest_text.index(close, i)
            body = rest_text[i + 1:j]
            if ch == "<":
                slots.append(_expand_types(body))
            else:
                groups.append((frozenset(body.split()), ch == "{"))
            i = j + 1
        else:
            i += 1
    operands = tuple(o.strip() for o in ops.split(",") if o.strip())
    optional_from = next((k for k, o in enumerate(operands) if o.endswith("?")), len(operands))
    operands = tuple(o.rstrip("?") for o in operands)
    return Form(opcode, tuple(groups), tuple(slots), operands, optional_from)


def _split_form_lines(text: str) -> list[tuple[str, str]]:
    # `:` also appears inside `::` modifiers; the operand separator is ` : ` or a line-final `:`.
    lines = []
    for raw in text.strip().splitlines():
        raw = raw.strip()
        if not raw:
            continue
        head, sep, ops = raw.rpartition(" :")
        lines.append((head, ops) if sep else (raw.rstrip(":"), ""))
    return lines


def _build() -> dict[str, list[Form]]:
    table: dict[str, list[Form]] = {}
    for head, ops in _split_form_lines(_FORM_TEXT):
        form = _parse_form(head, ops)
        table.setdefault(form.opcode, []).append(form)
    return table


FORMS: dict[str, list[Form]] = _build()

# Modifiers ptxas treats as part of the instruction's name in its messages
# ("Arguments mismatch for instruction 'mul.wide'").
SUBOPCODES: dict[str, frozenset] = {
    "mul": frozenset((".lo", ".hi", ".wide")), "mad": frozenset((".lo", ".hi", ".wide")),
    "mul24": frozenset((".lo", ".hi")), "mad24": frozenset((".lo", ".hi")),
    "bar": frozenset((".arrive", ".red", ".warp")), "cvta": frozenset((".to",)),
    "createpolicy": frozenset((".fractional", ".range", ".cvt")), "cp": frozenset((".async",)),
    "sust": frozenset((".b", ".p")), "suld": frozenset((".b",)),
    # probed with ptxas 13.5.37 (branch reject26): 'madc.lo', 'shf.r', 'barrier.red',
    # 'dp2a.lo', 'div.full' in "Arguments mismatch" and "Unexpected instruction types"
    "madc": frozenset((".lo", ".hi")), "div": frozenset((".full",)),
    "dp2a": frozenset((".lo", ".hi")), "shf": frozenset((".l", ".r")),
    "barrier": frozenset((".red",)),
}

# The sink `_` as a whole first result ("result discard mode"): the instructions ptxas 13.5
# takes it for (every inventory form probed on sm_89 and sm_100; None = every form of the
# opcode, else the modifiers one of which the instruction must have). Elsewhere ptxas stops
# with a fatal 'Result discard mode is not allowed for instruction ...'.
RESULT_DISCARD_ALLOWED: dict[str, frozenset | None] = {
    "atom": None, "setp": None, "lop3": None, "match": frozenset((".all",)),
    "mbarrier": frozenset((".arrive", ".arrive_drop")),
}
# ... and the first side of a `d|p` pair (`shfl`'s is refused like a whole sink).
RESULT_DISCARD_PAIR_FIRST = frozenset(("setp", "lop3", "match", "elect"))
# Where the predicate output is wanted: a whole sink or a sink predicate is an error.
RESULT_DISCARD_PAIRED: dict[str, frozenset] = {
    "lop3": frozenset((".or", ".and")), "elect": frozenset((".sync",)),
}
# Modifiers that join the instruction's name in that fatal message (more than SUBOPCODES:
# 'madc.hi', 'shf.l', 'tex.level', 'mbarrier.test_wait.parity', 'cvt.pack', ...).
RESULT_DISCARD_NAMES: dict[str, frozenset] = {
    **SUBOPCODES, "tex": frozenset((".level", ".grad")),
    "mbarrier": frozenset((".test_wait", ".try_wait", ".parity", ".pending_count")),
    "cvt": frozenset((".pack",)), "clusterlaunchcontrol": frozenset((".query_cancel",)),
    "multimem": frozenset((".ld_reduce",)),
}

# A required modifier group that is missing, by a spelling it contains -> ptxas's message.
MISSING_GROUP_MESSAGES: tuple[tuple[frozenset, str], ...] = (
    (frozenset((".approx", ".rn")), "Rounding modifier or '.approx' modifier required for "
                                    "instruction '{op}'"),
    (frozenset((".approx",)), ".approx modifier required for instruction '{op}'"),
    (frozenset((".rn",)), "Rounding modifier required for instruction '{op}'"),
    (frozenset((".rni",)), "Rounding modifier required for instruction '{op}'"),
    (frozenset((".eq",)), "Comparison modifier required for instruction '{op}'"),
    (frozenset((".up",)), "Shuffle modifier required for instruction '{op}'"),
    (frozenset((".gl",)), "Membar level required for instruction '{op}'"),
    (frozenset((".aligned",)), ".aligned modifier required for instruction '{op}'"),
    (frozenset((".sync",)), ".sync modifier required for instruction '{op}'"),
    (frozenset((".clamp", ".wrap")), "Clamp modifier required for instruction '{op}'"),
)

# Types an atomic operation takes, in the order ptxas lists them in its message.
OPERATION_TYPES: dict[tuple[str, str], tuple[str, ...]] = {
    (op, ".add"): (".u32", ".s32", ".u64", ".f64", ".f16", ".f16x2", ".f32", ".bf16", ".bf16x2")
    for op in ("atom", "red")
}
OPERATION_TYPES.update({(op, m): (".u32", ".s32", ".u64", ".s64", ".f16", ".f16x2", ".bf16",
                                  ".bf16x2")
                        for op in ("atom", "red") for m in (".min", ".max")})
OPERATION_TYPES.update({(op, m): (".b32", ".b64") for op in ("atom", "red")
                        for m in (".and", ".or", ".xor")})
OPERATION_TYPES.update({(op, m): (".u32",) for op in ("atom", "red") for m in (".inc", ".dec")})
OPERATION_TYPES[("atom", ".exch")] = (".b32", ".b64", ".b128")

OPERATION_TYPES[("redux", ".min")] = OPERATION_TYPES[("redux", ".max")] = (".u32", ".s32", ".f32")
OPERATION_TYPES[("redux", ".add")] = (".u32", ".s32")      # (no f32 sum: ptxas 13.5.37)
OPERATION_TYPES.update({("redux", m): (".b32",) for m in (".and", ".or", ".xor")})
OPERATION_TYPES.update({("vote", m): (".pred",) for m in (".all", ".any", ".uni")})
OPERATION_TYPES[("vote", ".ballot")] = (".b32",)
# sured.b (PTX ISA, surface reduction): the operation decides the type
OPERATION_TYPES[("sured", ".add")] = (".u32", ".s32", ".u64")
OPERATION_TYPES.update({("sured", m): (".u32", ".s32", ".u64", ".s64") for m in (".min", ".max")})
OPERATION_TYPES.update({("sured", m): (".b32",) for m in (".and", ".or")})
OPERATION_TYPE_MESSAGES = {
    "sured": "Incorrect type '{type}' for operation '{mod}' in instruction 'sured.b'",
    "atom": "Operation {mod} requires {allowed} type for instruction '{op}'",
    "red": "Operation {mod} requires {allowed} type for instruction '{op}'",
    "redux": "Incorrect type '{type}' for operation '{mod}' in instruction '{op}'",
    "vote": "Instruction '{op}' requires '{first}' type with '{mod}' modifier.",
}
# By opcode, with "*" the union of the types any of its operations takes.
OPERATION_TYPES_BY_OPCODE: dict[str, dict[str, tuple[str, ...]]] = {}
for (_op, _mod), _types in OPERATION_TYPES.items():
    _rules = OPERATION_TYPES_BY_OPCODE.setdefault(_op, {"*": ()})
    _rules[_mod] = _types
    _rules["*"] = tuple(dict.fromkeys(_rules["*"] + _types))

# (opcode, modifier, type) -> the modifier it cannot go without.
REQUIRED_COMPANIONS = {("rcp", ".approx", ".f64"): ".ftz"}

# Operands that must be one of a few immediates: (opcode, modifier) -> (operand index, values).
IMMEDIATE_CHOICES: dict[tuple[str, str], tuple[int, tuple[int, ...]]] = {
    ("cp", ".ca"): (2, (4, 8, 16)),
    ("cp", ".cg"): (2, (16,)),
}

# State spaces an instruction's modifiers may name but that ptxas refuses for it.
ILLEGAL_SPACES: dict[str, frozenset] = {
    "atom": frozenset((".const", ".local", ".param")),
    "red": frozenset((".const", ".local", ".param")),
    "st": frozenset((".const",)),
}

ROUNDING_MODIFIERS = frozenset((".rn", ".rz", ".rm", ".rp", ".rni", ".rzi", ".rmi", ".rpi",
                                ".rna", ".rs"))
# Every modifier spelling some form knows (plus the lenient instructions' common ones):
# anything else is "Unknown modifier".
KNOWN_MODIFIERS = frozenset(
    {m for forms in FORMS.values() for f in forms for g, _ in f.groups for m in g}
    | {t for forms in FORMS.values() for f in forms for s in f.type_slots for t in s}
    | set(TYPE_SETS["all"]) | {".pred", ".u16x2", ".s16x2", ".xorsign", ".abs", ".NaN",
                               ".mbarrier::complete_tx::bytes"}    # (st.async's: illegal elsewhere)
)

# Fundamental types as they appear among an instruction's modifiers.
TYPE_MODIFIERS = frozenset(TYPE_SETS["all"]) | {
    ".pred", ".u16x2", ".s16x2", ".tf32", ".e4m3", ".e5m2", ".e4m3x2", ".e5m2x2", ".e2m1",
    ".e2m1x2", ".e2m3x2", ".e3m2x2", ".ue8m0x2", ".f32x2", ".e4m3x4", ".e5m2x4", ".e2m3x4",
    ".e3m2x4", ".e2m1x4"}

# Sizes in bits of each fundamental type (registers and instruction types).
TYPE_BITS: dict[str, int] = {
    ".b8": 8, ".u8": 8, ".s8": 8, ".e4m3": 8, ".e5m2": 8,
    ".b16": 16, ".u16": 16, ".s16": 16, ".f16": 16, ".bf16": 16, ".e4m3x2": 16, ".e5m2x2": 16,
    ".b32": 32, ".u32": 32, ".s32": 32, ".f32": 32, ".f16x2": 32, ".bf16x2": 32, ".tf32": 32,
    ".u16x2": 32, ".s16x2": 32,
    ".b64": 64, ".u64": 64, ".s64": 64, ".f64": 64, ".f32x2": 64,
    ".b128": 128, ".pred": 1, ".e2m1x2": 8, ".e2m3x2": 16, ".e3m2x2": 16, ".ue8m0x2": 16,
    ".e4m3x4": 32, ".e5m2x4": 32, ".e2m3x4": 32, ".e3m2x4": 32, ".e2m1x4": 16,
}


def type_class(t: str) -> str:
    """'b', 'u', 's', 'f' (floats incl. packed halves) or 'pred'."""
    if t == ".pred":
        return "pred"
    c = t[1]
    if c in "bus" and not t.startswith(".bf"):
        return c
    return "f"


# Functions ptxas provides itself: calling their `.extern` declaration needs no definition.
SYSTEM_FUNCTIONS = frozenset(("vprintf", "malloc", "free", "__assertfail"))

# Special registers: name -> type (vector ones take .x/.y/.z/.w).
SPECIAL_REGISTERS: dict[str, str] = {
    "%tid": ".v4.u32", "%ntid": ".v4.u32", "%ctaid": ".v4.u32", "%nctaid": ".v4.u32",
    "%clusterid": ".v4.u32", "%nclusterid": ".v4.u32", "%cluster_ctaid": ".v4.u32",
    "%cluster_nctaid": ".v4.u32",
    "%laneid": ".u32", "%warpid": ".u32", "%nwarpid": ".u32", "%smid": ".u32",
    "%nsmid": ".u32", "%gridid": ".u64", "%lanemask_eq": ".u32", "%lanemask_le": ".u32",
    "%lanemask_lt": ".u32", "%lanemask_ge": ".u32", "%lanemask_gt": ".u32",
    "%clock": ".u32", "%clock_hi": ".u32", "%clock64": ".u64", "%globaltimer": ".u64",
    "%globaltimer_lo": ".u32", "%globaltimer_hi": ".u32",
    "%dynamic_smem_size": ".u32", "%total_smem_size": ".u32", "%aggr_smem_size": ".u32",
    "%reserved_smem_offset_begin": ".b32", "%reserved_smem_offset_end": ".b32",
    "%reserved_smem_offset_cap": ".b32", "%reserved_smem_offset_0": ".b32",
    "%reserved_smem_offset_1": ".b32", "%cluster_ctarank": ".u32",
    "%cluster_nctarank": ".u32", "%is_explicit_cluster": ".pred",
    "%current_graph_exec": ".u64",
}
# Special registers ptxas 13.5 refuses below sm_90 ("Feature '%clusterid' requires .target
# sm_90 or higher").
SM90_SPECIAL_REGISTERS = frozenset(("%clusterid", "%nclusterid", "%cluster_ctaid", "%cluster_nctaid",
                                    "%cluster_ctarank", "%cluster_nctarank", "%is_explicit_cluster",
                                    "%aggr_smem_size"))
SPECIAL_REGISTERS.update({f"%pm{i}": ".u32" for i in range(8)})
SPECIAL_REGISTERS.update({f"%pm{i}_64": ".u64" for i in range(8)})
SPECIAL_REGISTERS.update({f"%envreg{i}": ".b32" for i in range(32)})

# PTX ISA versions this release understands, and the newest (ptxas 13.5: 9.5).
SUPPORTED_VERSIONS = frozenset(
    [(1, m) for m in range(5)] + [(2, m) for m in range(4)] + [(3, m) for m in range(3)]
    + [(4, m) for m in range(4)] + [(5, 0)] + [(6, m) for m in range(6)]
    + [(7, m) for m in range(9)] + [(8, m) for m in range(9)] + [(9, m) for m in range(6)])
NEWEST_VERSION = (9, 5)

# Targets ptxas 13.5 knows, by the number used to compare them (`sm_90a` -> 90).
KNOWN_TARGETS = frozenset(
    [f"sm_{n}" for n in (10, 11, 12, 13, 20, 21, 30, 32, 35, 37, 50, 52, 53, 60, 61, 62, 70,
                         72, 75, 80, 86, 87, 88, 89, 90, 100, 101, 103, 107, 110, 120, 121)]
    + [f"sm_{n}a" for n in (90, 100, 101, 103, 107, 110, 120, 121)]
    + [f"sm_{n}f" for n in (100, 101, 103, 107, 110, 120, 121)])
# A virtual architecture (`.target compute_89`) is its real one to ptxas 13.5 (same verdicts,
# same cubin); only messages that name the `.target` spell it as written.
VIRTUAL_PREFIX, REAL_PREFIX = "compute_", "sm_"
ARCH_PREFIXES = (REAL_PREFIX, VIRTUAL_PREFIX)


def real_target(name: str) -> str:
    """The `sm_` target a `.target` name stands for (`compute_90a` -> `sm_90a`)."""
    return REAL_PREFIX + name[len(VIRTUAL_PREFIX):] if name.startswith(VIRTUAL_PREFIX) else name


# The first PTX ISA version that knows each target (PTX ISA manual, release notes; each
# entry checked against ptxas 13.5: one minor version lower is refused).
TARGET_MIN_VERSION: dict[str, tuple[int, int]] = {
    "sm_10": (1, 0), "sm_11": (1, 0), "sm_12": (1, 2), "sm_13": (1, 2), "sm_20": (2, 0),
    "sm_21": (2, 1), "sm_30": (3, 0), "sm_32": (4, 0), "sm_35": (3, 1), "sm_37": (4, 1),
    "sm_50": (4, 0), "sm_52": (4, 1), "sm_53": (4, 2), "sm_60": (5, 0), "sm_61": (5, 0),
    "sm_62": (5, 0), "sm_70": (6, 0), "sm_72": (6, 1), "sm_75": (6, 3), "sm_80": (7, 0),
    "sm_86": (7, 1), "sm_87": (7, 4), "sm_88": (9, 0), "sm_89": (7, 8), "sm_90": (7, 8),
    "sm_90a": (8, 0), "sm_100": (8, 6), "sm_100a": (8, 6), "sm_100f": (8, 8),
    "sm_101": (8, 6), "sm_101a": (8, 6), "sm_101f": (8, 8), "sm_103": (8, 8),
    "sm_103a": (8, 8), "sm_103f": (8, 8), "sm_107": (9, 4), "sm_107a": (9, 4),
    "sm_107f": (9, 4), "sm_110": (9, 0), "sm_110a": (9, 0),
    "sm_110f": (9, 0), "sm_120": (8, 7), "sm_120a": (8, 7), "sm_120f": (8, 8),
    "sm_121": (8, 8), "sm_121a": (8, 8), "sm_121f": (8, 8),
}
ADDRESS_SIZE_MIN_VERSION = (2, 3)

TARGET_OPTIONS = frozenset(("texmode_unified", "texmode_independent", "debug",
                            "map_f64_to_f32"))


@dataclass(frozen=True, slots=True)
class Feature:
    """A construct that needs a minimum PTX version and/or target (ptxas names it)."""
    name: str
    min_version: tuple[int, int] | None
    min_sm: int | None


# Instructions only the arch-specific targets (`sm_90a`, `sm_100a`/`f`, ...) have.
ARCH_SPECIFIC_OPCODES = frozenset(("setmaxnreg", "wgmma", "tcgen05"))
# Instruction forms only some arch-specific targets have ("opcode.type" -> the `.target`s ptxas
# 13.5 accepts them for; elsewhere: "Instruction 'redux.f32' not supported on .target ...")
TARGET_LIMITED_FORMS = {"redux.f32": frozenset(("sm_100a", "sm_100f", "sm_103a", "sm_103f", "sm_107a", "sm_107f"))}

# Keyed by opcode, or opcode plus one modifier, as written in the instruction.
FEATURES: dict[str, Feature] = {
    "redux": Feature("redux", (7, 0), 80),
    "mma.sp::ordered_metadata": Feature(".sp::ordered_metadata", (8, 5), 80),
    "ld.v8": Feature("256 bit wide load/store", (8, 8), 100),
    "st.v8": Feature("256 bit wide load/store", (8, 8), 100),
    "cp.async": Feature("cp.async", (7, 0), 80),
    "cp.async.bulk": Feature("cp.async.bulk", (8, 0), 90),
    "cp.async.bulk.tensor": Feature("cp.async.bulk.tensor", (8, 0), 90),
    "cp.reduce.async.bulk.tensor": Feature("cp.reduce.async.bulk.tensor", (8, 0), 90),
    "cp.async.bulk.prefetch.tensor": Feature("cp.async.bulk.prefetch.tensor", (8, 0), 90),
    "clusterlaunchcontrol.try_cancel.async": Feature("clusterlaunchcontrol.try_cancel.async", (8, 6), 100),
    "clusterlaunchcontrol.query_cancel": Feature("clusterlaunchcontrol.query_cancel", (8, 6), 100),
    "ldmatrix": Feature("ldmatrix", (6, 5), 75),
    "stmatrix": Feature("stmatrix", (7, 8), 90),
    "match": Feature("match", (6, 0), 70),
    "activemask": Feature("activemask", (6, 2), None),
    "nanosleep": Feature("nanosleep", (6, 2), 70),
    "alloca": Feature("alloca", (7, 3), 52),
    "stacksave": Feature("stacksave", (7, 3), 52),
    "stackrestore": Feature("stackrestore", (7, 3), 52),
    "elect": Feature("elect", (8, 0), 90),
    "mapa": Feature("mapa", (7, 8), 90),
    "getctarank": Feature("getctarank", (7, 8), 90),
    "griddepcontrol": Feature("griddepcontrol", (7, 8), 90),
    "setmaxnreg": Feature("setmaxnreg", (8, 0), 90),
    "tanh": Feature("tanh", (7, 0), 75),
    "shf.l": Feature("shf.l", (3, 1), None),      # (ptxas 13.5.37, branch reject27)
    "shf.r": Feature("shf.r", (3, 1), None),
    "bmsk": Feature("bmsk", (7, 6), None),
    "szext": Feature("szext", (7, 6), None),
    "add.s16x2": Feature("add.s16x2", (8, 0), 90),
    "add.u16x2": Feature("add.u16x2", (8, 0), 90),
    "min.relu": Feature("min.relu", (8, 0), 90),
    "min.u16x2": Feature("min.u16x2", (8, 0), 90),
    "min.s16x2": Feature("min.s16x2", (8, 0), 90),
    "max.u16x2": Feature("max.u16x2", (8, 0), 90),
    "max.s16x2": Feature("max.s16x2", (8, 0), 90),
    "max.relu": Feature("max.relu", (8, 0), 90),
    "mbarrier.init": Feature("mbarrier.init", (7, 0), 80),
    "mbarrier.arrive": Feature("mbarrier.arrive", (7, 0), 80),
    "mbarrier.test_wait": Feature("mbarrier.test_wait", (7, 0), 80),
    "mbarrier.test_wait.parity": Feature("mbarrier.test_wait.parity", (7, 1), 80),
    "mbarrier.try_wait": Feature("mbarrier.try_wait", (7, 8), 90),
    "mbarrier.try_wait.parity": Feature("mbarrier.try_wait.parity", (7, 8), 90),
    "mbarrier.arrive.expect_tx": Feature("mbarrier.arrive.expect_tx", (8, 0), 90),
    "mbarrier.arrive_drop.expect_tx": Feature("mbarrier.arrive_drop.expect_tx", (8, 0), 90),
    "mbarrier.expect_tx": Feature("mbarrier.expect_tx", (8, 0), 90),
    "mbarrier.complete_tx": Feature("mbarrier.complete_tx", (8, 0), 90),
    "barrier.cluster.arrive": Feature("barrier.cluster.arrive", (7, 8), 90),
    "barrier.cluster.wait": Feature("barrier.cluster.wait", (7, 8), 90),
    "multimem.ld_reduce": Feature("multimem.ld_reduce", (8, 1), 90),
    "multimem.st": Feature("multimem.st", (8, 1), 90),
    "multimem.red": Feature("multimem.red", (8, 1), 90),
    "multimem.cp.async.bulk": Feature("multimem.cp.async.bulk", (9, 1), 90),
    "multimem.cp.reduce.async.bulk": Feature("multimem.cp.reduce.async.bulk", (9, 1), 90),
    "st.async": Feature("st.async", (8, 1), 90),
    "red.async": Feature("red.async", (8, 1), 90),
    "mma": Feature("mma", (6, 4), 70),
    "mma.m16n8k16": Feature(".m16n8k16", (7, 0), 80),
    "mma.m16n8k32": Feature(".m16n8k32", (7, 0), 80),
    "wgmma": Feature("wgmma", (8, 0), 90),
    "cvt.bf16x2": Feature(".bf16x2", (7, 0), 75),
    "ld.L2::64B": Feature("cache prefetching", (7, 4), 75),
    "ld.L2::128B": Feature("cache prefetching", (7, 4), 75),
    "ld.L2::256B": Feature("cache prefetching", (7, 4), 75),
    "ld.nc": Feature(".nc", (3, 1), None),          # (ptxas 13.5.37, reject28)
    "tcgen05": Feature("tcgen05", (8, 6), 100),
}
# Features ptxas 13.5.37 names by an instruction's (first) type, with the PTX version each
# needs (probed at `.version 4.1`/`4.2` and below each number, branch reject26):
# (opcodes, types, a modifier the instruction must also have or None, the feature).
_HALVES = frozenset((".f16", ".f16x2"))
TYPE_FEATURES: tuple[tuple[frozenset, frozenset, str | None, Feature], ...] = (
    (frozenset(("add", "sub", "mul", "fma", "neg", "abs", "setp", "set")), _HALVES, None,
     Feature("f16 arithemetic and compare instructions", (4, 2), None)),
    (frozenset(("neg",)), _HALVES, None, Feature("neg.f16 or neg.f16x2", (6, 0), None)),
    (frozenset(("abs",)), _HALVES, None, Feature("abs.f16 or abs.f16x2", (6, 5), None)),
    (frozenset(("ex2",)), _HALVES, None, Feature("ex2.f16/f16x2", (7, 0), None)),
    (frozenset(("add", "addc", "sub", "subc", "mad", "madc")),
     frozenset((".u64", ".s64", ".b64")), ".cc", Feature(".cc with 64bit type", (4, 3), None)),
)

# bf16 arithmetic, comparisons and approximations are sm_90 features (min/max/neg/abs/fma and
# the conversions are not).
FEATURES.update({f"{op}.{ty}": Feature(f"{op}.{ty}", (7, 8), 90)
                 for op in ("add", "sub", "mul", "set", "setp", "ex2", "tanh")
                 for ty in ("bf16", "bf16x2")})
