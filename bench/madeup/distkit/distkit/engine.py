import torch

from distkit.comm import SmoothedValue, gather_sizes, is_main, reduce_mean


def train_one_epoch(model, loader, opt, scaler, device, epoch, print_freq=20):
    model.train()
    meter = SmoothedValue()
    for i, (images, targets) in enumerate(loader):
        images = images.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(images), targets)
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(opt)  # SYNC
        scaler.update()
        reduced = reduce_mean(loss.detach())
        meter.update(reduced, images.shape[0])
        if i % print_freq == 0 and is_main():
            print(f"epoch {epoch} it {i} loss {meter.avg:.4f} lr {opt.param_groups[0]['lr']:.2e}")
    sizes = gather_sizes(len(loader.dataset), device)
    return meter.avg, sizes


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    correct = torch.zeros((), device=device)
    total = 0
    for images, targets in loader:
        images, targets = images.to(device, non_blocking=True), targets.to(device, non_blocking=True)
        correct += (model(images).argmax(1) == targets).sum()
        total += targets.numel()
    acc = reduce_mean(correct / total)
    return acc.item()  # SYNC
