"""Transforms run in the loader's workers, on the images as they were loaded: host tensors."""
import torch

from volkit.image import Image, Subject


class Transform:
    def __call__(self, subject: Subject) -> Subject:
        return self.apply_transform(subject)

    def apply_transform(self, subject: Subject) -> Subject:
        raise NotImplementedError


class ZNormalization(Transform):
    def apply_transform(self, subject):
        for image in subject.get_images():
            mask = image.data > image.data.mean()
            image.set_data(self.znorm(image.data, mask))
        return subject

    @staticmethod
    def znorm(tensor: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        values = tensor[mask]  # ok: host tensors
        mean, std = values.mean(), values.std()
        if std == 0:  # ok: a host tensor
            return tensor
        return (tensor - mean) / std


class Clamp(Transform):
    def apply_transform(self, subject):
        for image in subject.get_images():
            data = image.data
            if (data < 0).any():  # ok: a host tensor
                data = data.clamp(min=0)
            image.data = data
        return subject


class OneHot(Transform):
    def apply_transform(self, subject):
        for image in subject.get_images(intensity_only=False):
            if image.kind == "label":
                num = int(image.data.max().item()) + 1  # ok: a host tensor
                image.set_data(torch.nn.functional.one_hot(image.data.long(), num).float())
        return subject


class Compose(Transform):
    def __init__(self, transforms):
        self.transforms = list(transforms)

    def apply_transform(self, subject):
        for t in self.transforms:
            subject = t(subject)
        return subject
