//! Shared by the kernels (not a kernel): thread indices, the barrier, and a panic namespace
//! whose handlers call one noinline noreturn function, so ReleaseSafe's checks become `.func`
//! calls with `.param` arguments instead of Zig's formatting machinery.

pub fn globalId() u32 {
    return @workGroupId(0) * @workGroupSize(0) + @workItemId(0);
}

pub fn barrier() void {
    asm volatile ("bar.sync 0;" ::: .{ .memory = true });
}

/// Every safety check lands here with its own code; the kernels' inputs never trigger one.
pub noinline fn fail(code: u32, a: usize, b: usize) noreturn {
    @branchHint(.cold);
    asm volatile ("trap;" :: [c] "r" (code), [a] "l" (a), [b] "l" (b));
    unreachable;
}

pub const panic = struct {
    pub fn call(_: []const u8, _: ?usize) noreturn {
        fail(1, 0, 0);
    }
    pub fn sentinelMismatch(_: anytype, _: anytype) noreturn {
        fail(2, 0, 0);
    }
    pub fn unwrapError(_: anyerror) noreturn {
        fail(3, 0, 0);
    }
    pub fn outOfBounds(index: usize, len: usize) noreturn {
        fail(4, index, len);
    }
    pub fn startGreaterThanEnd(start: usize, end: usize) noreturn {
        fail(5, start, end);
    }
    pub fn inactiveUnionField(_: anytype, _: anytype) noreturn {
        fail(6, 0, 0);
    }
    pub fn sliceCastLenRemainder(len: usize) noreturn {
        fail(7, len, 0);
    }
    pub fn reachedUnreachable() noreturn {
        fail(8, 0, 0);
    }
    pub fn unwrapNull() noreturn {
        fail(9, 0, 0);
    }
    pub fn castToNull() noreturn {
        fail(10, 0, 0);
    }
    pub fn incorrectAlignment() noreturn {
        fail(11, 0, 0);
    }
    pub fn invalidErrorCode() noreturn {
        fail(12, 0, 0);
    }
    pub fn unexpectedErrorCode(_: anyerror) noreturn {
        fail(13, 0, 0);
    }
    pub fn integerOutOfBounds() noreturn {
        fail(14, 0, 0);
    }
    pub fn integerOverflow() noreturn {
        fail(15, 0, 0);
    }
    pub fn shlOverflow() noreturn {
        fail(16, 0, 0);
    }
    pub fn shrOverflow() noreturn {
        fail(17, 0, 0);
    }
    pub fn divideByZero() noreturn {
        fail(18, 0, 0);
    }
    pub fn exactDivisionRemainder() noreturn {
        fail(19, 0, 0);
    }
    pub fn integerPartOutOfBounds() noreturn {
        fail(20, 0, 0);
    }
    pub fn corruptSwitch() noreturn {
        fail(21, 0, 0);
    }
    pub fn shiftRhsTooBig() noreturn {
        fail(22, 0, 0);
    }
    pub fn invalidEnumValue() noreturn {
        fail(23, 0, 0);
    }
    pub fn forLenMismatch() noreturn {
        fail(24, 0, 0);
    }
    pub fn copyLenMismatch() noreturn {
        fail(25, 0, 0);
    }
    pub fn memcpyAlias() noreturn {
        fail(26, 0, 0);
    }
    pub fn noreturnReturned() noreturn {
        fail(27, 0, 0);
    }
    pub fn loadUninstantiableType() noreturn {
        fail(28, 0, 0);
    }
};
