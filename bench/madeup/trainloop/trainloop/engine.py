import math
import sys

import torch

from .utils import MetricLogger, ModelEma, reduce_dict


def cosine_lr(step, base_lr, warmup, total):
    if step < warmup:
        return base_lr * (step + 1) / warmup
    p = (step - warmup) / max(1, total - warmup)
    return 0.5 * base_lr * (1 + math.cos(math.pi * p))


def train_one_epoch(model, criterion, loader, optimizer, device, epoch, scaler=None, ema=None,
                    max_norm=1.0, print_freq=50, writer=None, step0=0):
    model.train()
    logger = MetricLogger()
    for i, (samples, targets) in enumerate(loader):
        step = step0 + i
        for g in optimizer.param_groups:
            g["lr"] = cosine_lr(step, 1e-3, 500, 10000)
        samples = samples.to(device, non_blocking=True)
        targets = [{k: v.to(device, non_blocking=True) for k, v in t.items()} for t in targets]
        with torch.autocast("cuda", enabled=scaler is not None):
            outputs = model(samples)
            loss_dict = criterion(outputs, targets)
            loss = sum(loss_dict[k] * criterion.weight_dict[k] for k in loss_dict)
        reduced = reduce_dict(loss_dict)
        loss_value = sum(reduced.values()).item()  # SYNC
        if not math.isfinite(loss_value):
            print(f"Loss is {loss_value}, stopping training")
            sys.exit(1)
        optimizer.zero_grad()
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            scaler.step(optimizer)  # SYNC
            scaler.update()
        else:
            loss.backward()
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            optimizer.step()
        if ema is not None:
            ema.update(model)
        logger.update(loss=loss_value, grad_norm=grad_norm, **reduced)
        if writer is not None and i % print_freq == 0:
            writer.add_scalar("train/loss", loss_value, step)
            writer.add_scalar("train/grad_norm", grad_norm, step)  # SYNC
            print(f"epoch {epoch} [{i}/{len(loader)}] {logger}")
    return logger


@torch.no_grad()
def evaluate(model, loader, device, num_classes):
    model.eval()
    confmat = torch.zeros(num_classes, num_classes, dtype=torch.int64, device=device)
    for images, target in loader:
        images, target = images.to(device), target.to(device)  # SYNC
        pred = model(images).argmax(1)
        k = (target >= 0) & (target < num_classes)
        confmat += torch.bincount(num_classes * target[k] + pred[k], minlength=num_classes ** 2).reshape(num_classes, num_classes)  # SYNC
    acc = confmat.diag().sum() / confmat.sum()
    iou = confmat.diag() / (confmat.sum(0) + confmat.sum(1) - confmat.diag())
    return {"acc": acc.item(), "miou": iou.mean().item(), "iou": iou.tolist()}  # SYNC


def main(args, model, criterion, train_loader, val_loader):
    device = torch.device(args.device)
    model.to(device)  # SYNC
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=args.wd)
    scaler = torch.cuda.amp.GradScaler() if args.amp else None
    ema = ModelEma(model) if args.ema else None
    best = 0.0
    for epoch in range(args.epochs):
        train_one_epoch(model, criterion, train_loader, optimizer, device, epoch, scaler, ema,
                        step0=epoch * len(train_loader))
        stats = evaluate(ema.module if ema else model, val_loader, device, args.num_classes)
        if stats["miou"] > best:
            best = stats["miou"]
            torch.save({"model": model.state_dict(), "epoch": epoch}, "best.pth")  # SYNC
    return best
