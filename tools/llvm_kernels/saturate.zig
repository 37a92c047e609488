// Saturating, wrapping and overflow-reporting arithmetic.
const gpu = @import("gpu.zig");
pub const panic = gpu.panic;

export fn saturate(o8: [*]addrspace(.global) u8, o16: [*]addrspace(.global) i16, o32: [*]addrspace(.global) i32, ou: [*]addrspace(.global) u32, a: [*]addrspace(.global) const i32, b: [*]addrspace(.global) const i32, n: u32) callconv(.kernel) void {
    const i = gpu.globalId();
    if (i >= n) return;
    const x = a[i];
    const y = b[i];
    const x8: u8 = @truncate(@as(u32, @bitCast(x)));
    const y8: u8 = @truncate(@as(u32, @bitCast(y)));
    o8[i] = (x8 +| y8) -| (y8 *| 2);
    const x16: i16 = @truncate(x);
    const y16: i16 = @truncate(y);
    o16[i] = (x16 +| y16) *| 3 -| (x16 <<| 2);
    o32[i] = (x +| y) -| (x *| y) +| (y <<| 5);
    const ux: u32 = @bitCast(x);
    const uy: u32 = @bitCast(y);
    const ov = @addWithOverflow(ux, uy);
    const mv = @mulWithOverflow(x, y);
    const sv = @subWithOverflow(ux, uy);
    ou[i] = (ux -| uy) +% (ux +| uy) +% ov[0] +% @as(u32, ov[1]) * 1000 +% @as(u32, mv[1]) * 7 +% @as(u32, sv[1]) * 31;
}
