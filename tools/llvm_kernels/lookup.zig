// Constant tables in .global memory indexed at run time, and a struct parameter by value.
const gpu = @import("gpu.zig");
pub const panic = gpu.panic;

const crc_table = blk: {
    @setEvalBranchQuota(10000);
    var t: [256]u32 = undefined;
    for (&t, 0..) |*e, k| {
        var c: u32 = @intCast(k);
        for (0..8) |_| c = if (c & 1 != 0) 0xEDB88320 ^ (c >> 1) else c >> 1;
        e.* = c;
    }
    break :blk t;
};

const Affine = extern struct { scale: f32, bias: f32 };

export fn lookup(crc: [*]addrspace(.global) u32, out: [*]addrspace(.global) f32, data: [*]addrspace(.global) const u8, x: [*]addrspace(.global) const f32, p: Affine, len: u32, n: u32) callconv(.kernel) void {
    const i = gpu.globalId();
    if (i >= n) return;
    var c: u32 = 0xFFFFFFFF;
    var k: u32 = 0;
    while (k < len) : (k += 1) c = crc_table[(c ^ data[i * len + k]) & 0xFF] ^ (c >> 8);
    crc[i] = ~c;
    out[i] = x[i] * p.scale + p.bias;
}
