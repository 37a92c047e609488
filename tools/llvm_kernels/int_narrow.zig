// 8- and 16-bit integer arithmetic: wrapping, sign extension, narrow shifts and compares.
const gpu = @import("gpu.zig");
pub const panic = gpu.panic;

export fn int_narrow(o8: [*]addrspace(.global) u8, o16: [*]addrspace(.global) i16, o32: [*]addrspace(.global) i32, a: [*]addrspace(.global) const u8, b: [*]addrspace(.global) const i8, c: [*]addrspace(.global) const i16, d: [*]addrspace(.global) const u16, n: u32) callconv(.kernel) void {
    const i = gpu.globalId();
    if (i >= n) return;
    const va = a[i];
    const vb = b[i];
    const vc = c[i];
    const vd = d[i];
    o8[i] = (va *% 3) +% @as(u8, @bitCast(vb)) ^ (va >> 2) | (va << @truncate(vd & 7));
    const s: i16 = @as(i16, vb) * 100 +% vc;
    o16[i] = if (s < vc) s >> 3 else s -% @as(i16, @bitCast(vd));
    o32[i] = @as(i32, vc) * @as(i32, vb) + @as(i32, vd) - @as(i32, va) + @divTrunc(@as(i32, vc), 7);
}
