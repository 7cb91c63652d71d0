import random

import numpy as np
import torch

from medkit.data import Image, Subject


class Transform:
    def __call__(self, subject: Subject) -> Subject:
        return self.apply_transform(subject)

    def apply_transform(self, subject: Subject) -> Subject:
        raise NotImplementedError


class RandomGamma(Transform):
    def __init__(self, log_gamma=(-0.3, 0.3)):
        self.log_gamma = log_gamma

    def apply_transform(self, subject):
        gamma = float(torch.empty(1).uniform_(*self.log_gamma).exp().item())
        for image in subject.get_images("intensity"):
            data = image.data
            if (data < 0).any():
                data = data - data.min()
            image.data = data.pow(gamma)
        return subject


class ZNormalization(Transform):
    def apply_transform(self, subject):
        for image in subject.get_images("intensity"):
            mask = image.data > image.data.mean()
            image.data = self.znorm(image.data, mask)
        return subject

    @staticmethod
    def znorm(tensor: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        values = tensor[mask]
        mean, std = values.mean(), values.std()
        if std == 0:
            return tensor
        return (tensor - mean) / std


class RescaleIntensity(Transform):
    def __init__(self, out_range=(0.0, 1.0), percentiles=(0.5, 99.5)):
        self.out_range = out_range
        self.percentiles = percentiles

    def apply_transform(self, subject):
        for image in subject.get_images("intensity"):
            image.data = self.rescale(image.data)
        return subject

    def rescale(self, tensor: torch.Tensor) -> torch.Tensor:
        lo, hi = np.percentile(tensor.numpy(), self.percentiles)
        tensor = tensor.clamp(lo, hi)
        if hi == lo:
            return torch.zeros_like(tensor)
        return (tensor - lo) / (hi - lo) * (self.out_range[1] - self.out_range[0]) + self.out_range[0]


class CropForeground(Transform):
    def __init__(self, margin=2):
        self.margin = margin

    def apply_transform(self, subject):
        label = subject["label"].data
        coords = torch.nonzero(label > 0)
        if len(coords) == 0:
            return subject
        lo = coords.min(0).values - self.margin
        hi = coords.max(0).values + self.margin + 1
        for image in subject.get_images():
            sl = tuple(slice(int(a), int(b)) for a, b in zip(lo.tolist(), hi.tolist()))
            image.data = image.data[sl]
        return subject


class OneHot(Transform):
    def apply_transform(self, subject):
        label = subject["label"]
        values = torch.unique(label.data)
        num = int(values.max().item()) + 1
        label.data = torch.nn.functional.one_hot(label.data.long(), num).movedim(-1, 0).float()
        return subject


class RandomFlip(Transform):
    def __init__(self, p=0.5):
        self.p = p

    def apply_transform(self, subject):
        if random.random() < self.p:
            for image in subject.get_images():
                image.data = image.data.flip(-1)
        return subject


class Compose(Transform):
    def __init__(self, transforms):
        self.transforms = list(transforms)

    def apply_transform(self, subject):
        for t in self.transforms:
            subject = t(subject)
        return subject


def label_volumes(subject: Subject) -> dict:
    label = subject["label"].data.long()
    counts = torch.bincount(label.flatten())
    return {i: int(c) for i, c in enumerate(counts.tolist()) if c > 0}


def make_subject(image: np.ndarray, label: np.ndarray) -> Subject:
    return Subject({"t1": Image(image), "label": Image(label, kind="label")})
