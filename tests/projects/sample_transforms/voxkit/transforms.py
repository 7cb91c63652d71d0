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


class CropForeground:
    """Runs in the loader's workers on host samples: nothing here waits for a GPU."""

    def __init__(self, size):
        self.size = size

    def __call__(self, sample):
        image, label = sample["image"], sample["label"]
        fg = torch.nonzero(label > 0)  # ok: a host tensor
        if len(fg) and random.random() < 0.5:
            cy, cx = fg[random.randrange(len(fg))].tolist()[-2:]  # ok: a host tensor
        else:
            cy, cx = 0, 0
        return {"image": image[..., cy:cy + self.size, cx:cx + self.size],
                "label": label[..., cy:cy + self.size, cx:cx + self.size]}


class Normalize:
    def __call__(self, sample):
        img = sample["image"]
        vals = img[img != 0]  # ok: a host tensor
        if vals.numel() > 0:
            img = (img - vals.mean().item()) / max(vals.std().item(), 1e-8)  # ok: host tensors
        return {**sample, "image": img}


class Volumes(torch.utils.data.Dataset):
    def __init__(self, arrays, labels, transform=None):
        self.arrays, self.labels, self.transform = arrays, labels, transform

    def __len__(self):
        return len(self.arrays)

    def __getitem__(self, i):
        sample = {"image": torch.from_numpy(np.asarray(self.arrays[i], dtype=np.float32))[None],
                  "label": torch.from_numpy(np.asarray(self.labels[i]))}
        if self.transform is not None:
            sample = self.transform(sample)
        return sample
