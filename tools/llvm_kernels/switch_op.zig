// A dense switch: LLVM writes a jump table (brx.idx).
const gpu = @import("gpu.zig");
pub const panic = gpu.panic;

noinline fn apply(op: u32, a: u32, b: u32) u32 {
    return switch (op) {
        0 => a +% b,
        1 => a -% b,
        2 => a *% b,
        3 => a ^ (b << 3),
        4 => a << @truncate(b),
        5 => @min(a, b) | 0x100,
        6 => @max(a, b) / 3,
        7 => a | (b >> 2),
        8 => @popCount(a) + b,
        9 => a & ~b,
        10 => (a >> @truncate(b)) +% 77,
        11 => @bitReverse(a) ^ b,
        else => 0xdead,
    };
}

export fn switch_op(out: [*]addrspace(.global) u32, op: [*]addrspace(.global) const u32, a: [*]addrspace(.global) const u32, b: [*]addrspace(.global) const u32, n: u32) callconv(.kernel) void {
    const i = gpu.globalId();
    if (i >= n) return;
    var acc = apply(op[i], a[i], b[i]);
    // and one inlined in the kernel, on a second selector
    acc +%= switch ((op[i] *% 7 +% 3) % 13) {
        0 => a[i] *% 5,
        1 => b[i] +% 11,
        2 => a[i] ^ b[i],
        3 => a[i] >> 3,
        4 => b[i] << 2,
        5 => a[i] -% b[i],
        6 => ~a[i],
        7 => a[i] | 1,
        8 => b[i] & 0xff,
        else => 42,
    };
    out[i] = acc;
}
