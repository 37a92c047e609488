"""LEB128 integers, as DWARF writes them (the cubin's debug frame and line programs)."""


def uleb(value: int) -> bytes:
    """Unsigned LEB128: seven bits a byte, low first, the top bit set on all but the last."""
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def sleb(value: int) -> bytes:
    """Signed LEB128: ends once the rest is the sign extension of the last byte's bit 6."""
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        done = (value == 0 and not byte & 0x40) or (value == -1 and byte & 0x40)
        out.append(byte | (0 if done else 0x80))
        if done:
            return bytes(out)
