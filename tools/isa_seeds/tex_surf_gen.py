"""Writes tools/isa_seeds/tex_surf.ptx (no argument) and tex_surf_bindless.ptx (argument b):
seeds for tools/isa_probe.py covering the texture/surface instruction forms.

    python3 tools/isa_seeds/tex_surf_gen.py > tools/isa_seeds/tex_surf.ptx
    python3 tools/isa_seeds/tex_surf_gen.py b > tools/isa_seeds/tex_surf_bindless.ptx
"""
import sys
B = len(sys.argv) > 1
HT = ("%rd5",) if B else ("%rd2", "%rd5", "tr")
HS = ("%rd6",) if B else ("%rd3", "%rd6", "sr")
lines = []
R = iter(range(100, 10000))
stores = []
def regs(n, cls):
    rs = [f"%{cls}{next(R)}" for _ in range(n)]
    stores.extend(rs); return rs
def vec(rs): return "{" + ",".join(rs) + "}" if len(rs) > 1 else rs[0]
GEO = {"1d": 1, "2d": 2, "3d": 4, "a1d": 2, "a2d": 4, "cube": 4, "acube": 4, "2dms": 4, "a2dms": 4}
def coords(geo, ct):
    n = GEO[geo]
    if geo in ("a1d",): return "{%r1, %" + ("f1" if ct == "f32" else "r2") + "}"
    if geo in ("a2d", "acube"):
        c = ["%f1", "%f2", "%f3"] if ct == "f32" else ["%r2", "%r3", "%r4"]
        return "{%r1, " + ", ".join(c) + "}"
    if geo in ("2dms", "a2dms"):
        return "{%r1, %r2, %r3, %r4}"
    c = ["%f1", "%f2", "%f3", "%f4"] if ct == "f32" else ["%r1", "%r2", "%r3", "%r4"]
    return "{" + ", ".join(c[:n]) + "}"
def emit(s): lines.append("\t" + s + ";")
for h in HT:   # bound param slot, bindless register, module texref
    for geo in ("1d", "2d", "3d", "a1d", "a2d", "cube", "acube"):
        for ct in ("f32", "s32"):
            if geo in ("cube", "acube") and ct == "s32": continue
            for dt, cls in (("f32", "f"), ("s32", "r")):
                emit(f"tex.{geo}.v4.{dt}.{ct} {vec(regs(4, cls))}, [{h}, {coords(geo, ct)}]")
        if geo in ("2d", "a2d", "3d", "cube"):
            emit(f"tex.level.{geo}.v4.f32.f32 {vec(regs(4,'f'))}, [{h}, {coords(geo, 'f32')}], %f5")
            g = {"2d": 2, "a2d": 2, "3d": 4, "cube": 4}[geo]
            gv = "{" + ", ".join(["%f5", "%f6", "%f7", "%f8"][:g]) + "}"
            if geo != "cube":
                emit(f"tex.grad.{geo}.v4.f32.f32 {vec(regs(4,'f'))}, [{h}, {coords(geo, 'f32')}], {gv}, {gv}")
    emit(f"tex.2d.v4.f32.f32 {vec(regs(4,'f'))}, [{h}, {coords('2d','f32')}], {{%r5, %r6}}")
    emit(f"tex.2d.v4.f32.f32 {vec(regs(4,'f'))}, [{h}, {coords('2d','f32')}], {{%r5, %r6}}, %f9")
    emit(f"tex.2d.v4.f32.f32 {vec(regs(4,'f'))}, [{h}, {coords('2d','f32')}], %f9")
    emit(f"tex.2dms.v4.f32.s32 {vec(regs(4,'f'))}, [{h}, {coords('2dms','s32')}]")
    emit(f"tex.a2dms.v4.s32.s32 {vec(regs(4,'r'))}, [{h}, {coords('a2dms','s32')}]")
    emit(f"tex.2d.v2.f16x2.f32 {vec(regs(2,'r'))}, [{h}, {coords('2d','f32')}]")
    for c in "rgba":
        emit(f"tld4.{c}.2d.v4.f32.f32 {vec(regs(4,'f'))}, [{h}, {coords('2d','f32')}]")
    emit(f"tld4.r.a2d.v4.s32.f32 {vec(regs(4,'r'))}, [{h}, {coords('a2d','f32')}]")
    emit(f"tld4.g.cube.v4.f32.f32 {vec(regs(4,'f'))}, [{h}, {coords('cube','f32')}]")
    emit(f"tld4.b.2d.v4.u32.f32 {vec(regs(4,'r'))}, [{h}, {coords('2d','f32')}], {{%r5, %r6}}, %f9")
    for q in ("width", "height", "depth", "channel_data_type", "channel_order", "normalized_coords",
              "array_size", "num_mipmap_levels", "num_samples"):
        emit(f"txq.{q}.b32 {regs(1,'r')[0]}, [{h}]")
    emit(f"txq.level.width.b32 {regs(1,'r')[0]}, [{h}], %r7")
    emit(f"txq.level.height.b32 {regs(1,'r')[0]}, [{h}], %r7")
for h in HS:
    for geo, c in (("1d", "{%r1}"), ("2d", "{%r1, %r2}"), ("3d", "{%r1, %r2, %r3, %r4}"),
                   ("a1d", "{%r5, %r1}"), ("a2d", "{%r5, %r1, %r2, %r3}")):
        for clamp in ("trap", "clamp", "zero"):
            for ty, cls, vs in (("b8", "h", ("", ".v2", ".v4")), ("b16", "h", ("", ".v2", ".v4")),
                                ("b32", "r", ("", ".v2", ".v4")), ("b64", "rd", ("", ".v2"))):
                for v in vs:
                    n = int(v[2:]) if v else 1
                    emit(f"suld.b.{geo}{v}.{ty}.{clamp} {vec(regs(n, cls))}, [{h}, {c}]")
                    src = {"h": "%h", "r": "%r", "rd": "%rd"}[cls]
                    sv = vec([f"{src}{i+1}" for i in range(n)])
                    emit(f"sust.b.{geo}{v}.{ty}.{clamp} [{h}, {c}], {sv}")
            emit(f"sust.p.{geo}.v4.b32.{clamp} [{h}, {c}], {{%r1, %r2, %r3, %r4}}")
            if geo.startswith("a"): continue
            for op, ty in (("add", "u32"), ("min", "s32"), ("max", "u32"), ("and", "b32"), ("or", "b32"), ("add", "u64")):
                s = "%rd1" if "64" in ty else "%r1"
                emit(f"sured.b.{op}.{geo}.{ty}.{clamp} [{h}, {c}], {s}")
            emit(f"sured.p.add.{geo}.b32.{clamp} [{h}, {c}], %r1")
    for q in ("width", "height", "depth", "channel_data_type", "channel_order", "array_size", "memory_layout"):
        emit(f"suq.{q}.b32 {regs(1,'r')[0]}, [{h}]")
out = (["// Seeds for tools/isa_probe.py --seed-ptx (sm_80/86/89): tex_surf.ptx's texture and surface",
 "// instructions on a handle that differs per thread (ptxas keeps one loaded from a uniform",
 "// address in a uniform register: tex_surf.ptx), the .B forms with the handle in a register."] if B else ["// Seeds for tools/isa_probe.py --seed-ptx (sm_80/86/89): texture and surface instructions",
       "// (tex, tld4, txq, suld, sust, sured, suq) on a handle in a kernel parameter (ptxas: a",
       "// constant-bank slot), a handle in a register (the .B bindless forms) and module",
       "// .texref/.surfref variables; every geometry, lod/grad/offset/depth-compare operand,",
       "// clamp mode and vector width. Generated by hand-written loops; every result is stored."]) + [
       ".version 7.8", ".target sm_80", ".address_size 64", ".global .texref tr;", ".global .surfref sr;",
       ".visible .entry tex_surf_forms(.param .u64 out, .param .u64 th, .param .u64 sh, .param .u64 hp)", "{",
       "\t.reg .b64 %rd<10000>;", "\t.reg .b32 %r<10000>;", "\t.reg .f32 %f<10000>;", "\t.reg .b16 %h<10000>;",
       "\tld.param.u64 %rd1, [out];", "\tld.param.u64 %rd2, [th];", "\tld.param.u64 %rd3, [sh];",
       "\tld.param.u64 %rd4, [hp];"] + ((["\tmov.u32 %r20, %tid.x;", "\tmul.wide.u32 %rd7, %r20, 16;", "\tadd.s64 %rd8, %rd4, %rd7;", "\tld.global.u64 %rd5, [%rd8];", "\tld.global.u64 %rd6, [%rd8+8];"]) if B else ["\tld.global.u64 %rd5, [%rd4];", "\tld.global.u64 %rd6, [%rd4+8];"])
for i in range(1, 10):
    out.append(f"\tld.global.u32 %r{i}, [%rd4+{12+4*i}];")
    out.append(f"\tld.global.f32 %f{i}, [%rd4+{64+4*i}];")
for i in range(1, 5):
    out.append(f"\tld.global.u16 %h{i}, [%rd4+{120+2*i}];")
out += lines
for k, r in enumerate(stores):
    ty = ".b64" if r.startswith("%rd") else ".b16" if r.startswith("%h") else ".b32"
    out.append(f"\tst.global{ty} [%rd1+{8*k}], {r};")
out += ["\tret;", "}"]
print("\n".join(out))
