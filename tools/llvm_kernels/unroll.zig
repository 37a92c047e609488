// Loops with constant trip counts (unrolled) and a run-time trip count LLVM unrolls by four.
const gpu = @import("gpu.zig");
pub const panic = gpu.panic;

export fn unroll(out: [*]addrspace(.global) f32, iout: [*]addrspace(.global) u32, x: [*]addrspace(.global) const f32, w: [*]addrspace(.global) const f32, u: [*]addrspace(.global) const u32, len: u32, n: u32) callconv(.kernel) void {
    const i = gpu.globalId();
    if (i >= n) return;
    // polynomial by Horner, 8 coefficients from w
    var p: f32 = 0;
    for (0..8) |k| p = p * x[i] + w[k];
    // dot product over a run-time length
    var d: f32 = 0;
    var k: u32 = 0;
    while (k < len) : (k += 1) d += x[(i + k) % n] * w[k % 8];
    out[i] = p;
    out[n + i] = d;
    // integer sum of a 16-wide window (vectorisable)
    var s: u32 = 0;
    for (0..16) |j| s +%= u[i * 16 + j] *% @as(u32, @intCast(j + 1));
    iout[i] = s;
}
