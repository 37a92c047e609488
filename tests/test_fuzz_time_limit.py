"""The fuzz runner's time limits count CPU time, so waiting (a loaded machine, a campaign paused
between sessions: campaign 9's one 'timeout' was the seed compiling when it paused) is not a
timeout, while a compile that spins still is; waits on ptxas use the wall clock."""
import time

import pytest

from ptx2sass.fuzz.runner import Timeout, time_limit


def test_waiting_is_not_a_cpu_timeout():
    with time_limit(0.2):
        time.sleep(0.5)


def test_spinning_is_a_cpu_timeout():
    t0 = time.process_time()
    with pytest.raises(Timeout):
        with time_limit(0.2):
            while time.process_time() - t0 < 5:
                pass
    assert time.process_time() - t0 < 2


def test_waiting_is_a_wall_clock_timeout():
    with pytest.raises(Timeout):
        with time_limit(0.2, cpu=False):
            time.sleep(2)
