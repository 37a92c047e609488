// Chains of conditions the optimizer turns into selp/min/max sequences.
const gpu = @import("gpu.zig");
pub const panic = gpu.panic;

export fn select_chain(out: [*]addrspace(.global) f32, iout: [*]addrspace(.global) i32, x: [*]addrspace(.global) const f32, k: [*]addrspace(.global) const i32, n: u32) callconv(.kernel) void {
    const i = gpu.globalId();
    if (i >= n) return;
    const v = x[i];
    const piece: f32 = if (v < -2.0) -1.0 else if (v < -0.5) v * 0.5 else if (v < 0.5) v * v else if (v < 2.0) v - 0.25 else 1.75 + v * 0.125;
    out[i] = std_clamp(piece, -0.9, 2.0);
    const c = k[i];
    var r: i32 = if (c > 100) 100 else if (c < -100) -100 else c;
    r = if (c & 1 == 0) r * 2 else r - 1;
    r = if (v > 0.0 and c > 0) r + 1000 else if (v > 0.0 or c > 0) r - 1000 else r;
    iout[i] = r;
}

inline fn std_clamp(v: f32, lo: f32, hi: f32) f32 {
    return if (v < lo) lo else if (v > hi) hi else v;
}
