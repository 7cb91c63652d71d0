import torch


def _rms(x):
    return x.pow(2).mean().sqrt()


def euler_step(func, t, dt, y):
    return y + dt * func(t, y)


def rk4_step(func, t, dt, y):
    k1 = func(t, y)
    k2 = func(t + dt / 2, y + dt * k1 / 2)
    k3 = func(t + dt / 2, y + dt * k2 / 2)
    k4 = func(t + dt, y + dt * k3)
    return y + dt * (k1 + 2 * k2 + 2 * k3 + k4) / 6


FIXED = {"euler": euler_step, "rk4": rk4_step}


class FixedGridSolver:
    def __init__(self, func, method="rk4", step_size=None):
        self.func = func
        self.step = FIXED[method]
        self.step_size = step_size

    def grid(self, t):
        if self.step_size is None:
            return t
        n = torch.ceil((t[-1] - t[0]) / self.step_size + 1).item()  # SYNC
        g = torch.arange(0, n, dtype=t.dtype, device=t.device) * self.step_size + t[0]
        g[-1] = t[-1]
        return g

    def integrate(self, y0, t):
        grid = self.grid(t)
        out = [y0]
        y = y0
        j = 1
        for t0, t1 in zip(grid[:-1], grid[1:]):
            y = self.step(self.func, t0, t1 - t0, y)
            while j < len(t) and t1 >= t[j]:  # SYNC
                out.append(y)
                j += 1
        return torch.stack(out)


class AdaptiveSolver:
    def __init__(self, func, rtol=1e-5, atol=1e-6, safety=0.9, max_steps=1000):
        self.func = func
        self.rtol = rtol
        self.atol = atol
        self.safety = safety
        self.max_steps = max_steps
        self.nfe = 0

    def _error_ratio(self, err, y0, y1):
        tol = self.atol + self.rtol * torch.max(y0.abs(), y1.abs())
        return _rms(err / tol)

    def _try_step(self, t, dt, y):
        self.nfe += 2
        full = rk4_step(self.func, t, dt, y)
        half = rk4_step(self.func, t + dt / 2, dt / 2, rk4_step(self.func, t, dt / 2, y))
        return half, half - full

    def integrate(self, y0, t):
        t0, t1 = t[0], t[-1]
        dt = (t1 - t0) / 100
        y = y0
        steps = 0
        while t0 < t1:  # SYNC
            if t0 + dt > t1:  # SYNC
                dt = t1 - t0
            y_new, err = self._try_step(t0, dt, y)
            ratio = self._error_ratio(err, y, y_new)
            if ratio <= 1:  # SYNC
                t0 = t0 + dt
                y = y_new
            factor = self.safety * ratio.clamp_min(1e-10) ** -0.2
            dt = dt * torch.clamp(factor, 0.2, 10.0)
            steps += 1
            if steps > self.max_steps:
                raise RuntimeError(f"too many steps at t={float(t0)}")  # SYNC
        return y
