"""The sleep's calibration (``timing.SleepClock``): a measurement stretched by other processes'
kernels (the snippet children calibrate side by side) or a clock still ramping up does not shorten
the sleep; the fastest of three measurements is the rate."""

from types import SimpleNamespace

from torchsync_lint.verify.timing import SleepClock


def fake_torch(ms_per_call):
    """A stand-in ``torch`` whose sleep of N cycles measures ``ms_per_call.pop(0) * N / 2e6`` ms."""
    state = {"cycles": 0}
    times = list(ms_per_call)

    class Event:
        def __init__(self, enable_timing=True):
            self.t = None

        def record(self):
            pass

        def synchronize(self):
            pass

        def elapsed_time(self, other):
            return times.pop(0) * state["cycles"] / 2_000_000

    def _sleep(cycles):
        state["cycles"] = cycles

    cuda = SimpleNamespace(Event=Event, _sleep=_sleep, synchronize=lambda: None)
    return SimpleNamespace(cuda=cuda), times


def test_the_fastest_of_three_measurements_is_the_rate():
    # 2M cycles took 10 ms the first time (another process's kernels in between), then 2 ms, 2.5 ms
    torch, left = fake_torch([10.0, 2.0, 2.5])
    clock = SleepClock(torch, sleep_ms=20.0)
    assert left == []
    assert clock.cycles_per_ms == 1_000_000  # 2M cycles in 2 ms, not in 10 ms
    assert clock.cycles == 20_000_000
    assert clock.scaled(5.0).cycles == 5_000_000


def test_a_given_rate_is_kept():
    torch, left = fake_torch([])
    assert SleepClock(torch, sleep_ms=5.0, cycles_per_ms=123.0).cycles == 615
