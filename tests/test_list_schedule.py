"""The list scheduler (sched/list_schedule.py) on hand-made regions: it must keep every
register dependence and the order of memory instructions, leave non-movable instructions
and block starts in place, and issue a long-latency producer before independent work."""
from ptx2sass.encoder.model import Instruction, Reg
from ptx2sass.sched.control import Slot
from ptx2sass.sched.list_schedule import schedule


def slot(opcode, writes=(), reads=(), **kw):
    ins = Instruction(opcode, (), tuple(Reg("R", r) for r in (*writes, *reads)))
    return Slot(ins, [("R", r) for r in reads], [("R", r) for r in writes], **kw)


def positions(order, slots):
    return {id(s): k for k, s in enumerate(order) if any(s is x for x in slots)}


def test_dependences_and_memory_order_are_kept():
    a = slot("IADD3", writes=[2], reads=[1])
    b = slot("LDG", writes=[4], reads=[2])          # reads a's result
    c = slot("IADD3", writes=[5], reads=[1])        # independent
    d = slot("STG", reads=[2, 5])                   # after b (memory order) and c
    e = slot("IADD3", writes=[1], reads=[6])        # overwrites a's and c's input: after them
    f = slot("FADD", writes=[7], reads=[4])         # reads the load
    region = [a, b, c, d, e, f]
    order = schedule(region)
    pos = {id(s): k for k, s in enumerate(order)}
    assert sorted(map(id, order)) == sorted(map(id, region))
    assert pos[id(a)] < pos[id(b)] < pos[id(d)]
    assert pos[id(c)] < pos[id(d)] and pos[id(a)] < pos[id(e)] and pos[id(c)] < pos[id(e)]
    assert pos[id(b)] < pos[id(f)]


def test_long_latency_producer_goes_first():
    """Three independent ALU ops written before a load whose result is read at the end:
    the load issues first; with its address computed in the region, the ALU ops fill the
    cycles until that address is ready."""
    alu = [slot("IADD3", writes=[10 + k], reads=[1]) for k in range(3)]
    load = slot("LDG", writes=[4], reads=[2])
    use = slot("FADD", writes=[5], reads=[4, 10])
    order = schedule(alu + [load, use])
    assert order[0] is load and order[-1] is use
    addr = slot("IADD3", writes=[2], reads=[1])
    order = schedule(alu + [addr, load, use])
    assert order[0] is addr and order.index(load) == 4


def test_barriers_and_block_starts_stay_put():
    first = slot("IADD3", writes=[2], reads=[1], block_start=True, labels=["L"])
    x = slot("IADD3", writes=[3], reads=[1])
    bar = slot("BAR")
    y = slot("IADD3", writes=[4], reads=[1])
    order = schedule([first, x, bar, y])
    assert order[0] is first and order[2] is bar and order[3] is y
