from .accel import device_grid
from .helpers import host_grid


def fit(model, loader, opt):
    for x, y in loader:
        loss = model(x.cuda(non_blocking=True), y.cuda(non_blocking=True))
        loss.backward()
        opt.step()
        grid = host_grid(4)
        if grid.sum() > 2:  # ok: the helper places it on the host constant's device
            print("host")
        if device_grid(4).sum() > 2:  # error: TSL302
            print("device")
