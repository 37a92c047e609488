// Bit counting and reversal on 8-, 16-, 32- and 64-bit values.
const gpu = @import("gpu.zig");
pub const panic = gpu.panic;

export fn bits(o32: [*]addrspace(.global) u32, o64: [*]addrspace(.global) u64, o16: [*]addrspace(.global) u16, a: [*]addrspace(.global) const u32, b: [*]addrspace(.global) const u64, n: u32) callconv(.kernel) void {
    const i = gpu.globalId();
    if (i >= n) return;
    const x = a[i];
    const y = b[i];
    const h: u16 = @truncate(x >> 8);
    const c: u8 = @truncate(x);
    o32[i] = @as(u32, @popCount(x)) | (@as(u32, @clz(x)) << 8) | (@as(u32, @ctz(x)) << 16) |
        (@as(u32, @popCount(y)) << 24);
    o32[n + i] = @bitReverse(x) ^ @byteSwap(x);
    o32[2 * n + i] = @as(u32, @clz(y)) | (@as(u32, @ctz(y)) << 8) | (@as(u32, @clz(h)) << 16) |
        (@as(u32, @ctz(c)) << 24);
    o64[i] = @bitReverse(y) +% @byteSwap(y);
    o16[i] = @byteSwap(h) ^ @bitReverse(h) ^ @as(u16, @popCount(h));
}
