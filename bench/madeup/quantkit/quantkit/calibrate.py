import torch

from .observers import QuantStub


@torch.no_grad()
def calibrate(model, loader, device, num_batches=32):
    model.eval()
    for i, (x, _) in enumerate(loader):
        if i >= num_batches:
            break
        model(x.to(device))  # SYNC
    for m in model.modules():
        if isinstance(m, QuantStub):
            m.freeze()


def quant_error(model, float_model, loader, device):
    errs = []
    with torch.no_grad():
        for x, _ in loader:
            x = x.to(device)  # SYNC
            errs.append((model(x) - float_model(x)).pow(2).mean())
    err = torch.stack(errs).mean()
    if torch.isnan(err):  # SYNC
        raise RuntimeError("quantized model produced NaN")
    return err.item()  # SYNC
