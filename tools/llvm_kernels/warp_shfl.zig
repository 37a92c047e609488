// Warp shuffles by inline assembly (Zig has no builtin): a butterfly sum and a broadcast.
const gpu = @import("gpu.zig");
pub const panic = gpu.panic;

inline fn shflBfly(v: u32, mask: u32) u32 {
    return asm volatile ("shfl.sync.bfly.b32 %[r], %[v], %[m], 31, -1;"
        : [r] "=r" (-> u32),
        : [v] "r" (v),
          [m] "r" (mask),
    );
}

inline fn shflIdx(v: u32, lane: u32) u32 {
    return asm volatile ("shfl.sync.idx.b32 %[r], %[v], %[l], 31, -1;"
        : [r] "=r" (-> u32),
        : [v] "r" (v),
          [l] "r" (lane),
    );
}

export fn warp_shfl(out: [*]addrspace(.global) f32, iout: [*]addrspace(.global) u32, x: [*]addrspace(.global) const f32, u: [*]addrspace(.global) const u32) callconv(.kernel) void {
    const i = gpu.globalId();
    var v = x[i];
    var m: u32 = 1;
    while (m < 32) : (m <<= 1) v += @bitCast(shflBfly(@bitCast(v), m));
    out[i] = v;
    iout[i] = shflIdx(u[i], u[i] & 31) ^ shflBfly(u[i], 5);
}
