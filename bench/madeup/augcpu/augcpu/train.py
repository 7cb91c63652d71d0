import torch
from torch.utils.data import DataLoader

from .transforms import Compose, LabelToOneHot, NormalizeIntensity, RandomCropNonEmpty, RandomFlip, Volumes, class_weights


def make_loader(arrays, labels, num_classes, batch_size=2):
    tf = Compose([RandomCropNonEmpty(64), NormalizeIntensity(), RandomFlip(), LabelToOneHot(num_classes)])
    ds = Volumes(arrays, labels, tf)
    return DataLoader(ds, batch_size=batch_size, shuffle=True, num_workers=4, pin_memory=True), ds


def dice_loss(logits, onehot, eps=1e-5):
    probs = logits.softmax(1)
    inter = (probs * onehot).sum((2, 3))
    union = probs.sum((2, 3)) + onehot.sum((2, 3))
    return 1 - ((2 * inter + eps) / (union + eps)).mean()


def train(model, arrays, labels, num_classes, epochs=1, device="cuda"):
    loader, ds = make_loader(arrays, labels, num_classes)
    weights = torch.tensor(class_weights(ds, num_classes), device=device)  # SYNC
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    model.to(device)  # SYNC
    for _ in range(epochs):
        for batch in loader:
            x = batch["image"].to(device, non_blocking=True)
            y = batch["label"].to(device, non_blocking=True)
            logits = model(x)
            ce = torch.nn.functional.cross_entropy(logits, y.argmax(1), weight=weights)
            loss = ce + dice_loss(logits, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    return model
