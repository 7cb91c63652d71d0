import random

import numpy as np
import torch


class Compose:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, sample):
        for t in self.transforms:
            sample = t(sample)
        return sample


class RandomCropNonEmpty:
    """Crop a patch that holds some foreground, on the CPU in the data loader's workers."""

    def __init__(self, size, tries=10):
        self.size = size
        self.tries = tries

    def __call__(self, sample):
        image, label = sample["image"], sample["label"]
        h, w = label.shape[-2:]
        fg = torch.nonzero(label > 0)
        for _ in range(self.tries):
            if len(fg) > 0 and random.random() < 0.7:
                cy, cx = fg[random.randrange(len(fg))].tolist()[-2:]
            else:
                cy, cx = random.randrange(h), random.randrange(w)
            y0 = min(max(cy - self.size // 2, 0), h - self.size)
            x0 = min(max(cx - self.size // 2, 0), w - self.size)
            crop = label[..., y0:y0 + self.size, x0:x0 + self.size]
            if crop.sum() > 0:
                break
        return {"image": image[..., y0:y0 + self.size, x0:x0 + self.size], "label": crop}


class NormalizeIntensity:
    def __init__(self, nonzero=True):
        self.nonzero = nonzero

    def __call__(self, sample):
        img = sample["image"]
        mask = img != 0 if self.nonzero else torch.ones_like(img, dtype=torch.bool)
        vals = img[mask]
        if vals.numel() > 0:
            mean, std = vals.mean().item(), vals.std().item()
            img = img.clone()
            img[mask] = (vals - mean) / max(std, 1e-8)
        return {**sample, "image": img}


class RandomFlip:
    def __init__(self, p=0.5, dims=(-1,)):
        self.p = p
        self.dims = dims

    def __call__(self, sample):
        if torch.rand(1).item() < self.p:
            return {k: v.flip(self.dims) for k, v in sample.items()}
        return sample


class LabelToOneHot:
    def __init__(self, num_classes):
        self.num_classes = num_classes

    def __call__(self, sample):
        label = sample["label"].long()
        classes = torch.unique(label)
        assert classes.max() < self.num_classes, f"label {classes.max()} out of range"
        onehot = torch.nn.functional.one_hot(label, self.num_classes).movedim(-1, 0)
        return {**sample, "label": onehot.float()}


class Volumes(torch.utils.data.Dataset):
    def __init__(self, arrays, labels, transform=None):
        self.arrays = arrays
        self.labels = labels
        self.transform = transform

    def __len__(self):
        return len(self.arrays)

    def __getitem__(self, i):
        image = torch.from_numpy(np.asarray(self.arrays[i], dtype=np.float32))[None]
        label = torch.from_numpy(np.asarray(self.labels[i]))
        sample = {"image": image, "label": label}
        if self.transform is not None:
            sample = self.transform(sample)
        return sample


def class_weights(dataset, num_classes):
    counts = torch.zeros(num_classes)
    for i in range(len(dataset)):
        counts += torch.bincount(dataset[i]["label"].flatten().long(), minlength=num_classes)[:num_classes]
    w = counts.sum() / (counts + 1)
    return (w / w.sum()).tolist()
