"""Images kept as dicts: the tensor under a key set by name, read back through a property."""
from typing import Optional

import numpy as np
import torch

from volkit.constants import AFFINE, DATA, INTENSITY


def read_array(path: str) -> np.ndarray:
    return np.load(path)


class Image(dict):
    def __init__(self, array: Optional[np.ndarray] = None, path: Optional[str] = None, kind: str = INTENSITY):
        super().__init__()
        self.kind = kind
        self.path = path
        if array is not None:
            self.set_data(array)
        self[AFFINE] = np.eye(4)

    def load(self) -> None:
        self.set_data(read_array(self.path))

    @property
    def data(self) -> torch.Tensor:
        return self[DATA]

    @data.setter
    def data(self, tensor: torch.Tensor) -> None:
        self.set_data(tensor)

    def set_data(self, tensor) -> None:
        self[DATA] = self._parse_tensor(tensor)

    @staticmethod
    def _parse_tensor(tensor) -> torch.Tensor:
        if isinstance(tensor, np.ndarray):
            tensor = torch.as_tensor(np.ascontiguousarray(tensor))
        if tensor.ndim != 4:
            raise ValueError("expected 4 dimensions")
        return tensor

    def numpy(self) -> np.ndarray:
        return self.data.numpy()


class Subject(dict):
    def get_images_dict(self, intensity_only: bool = True) -> dict:
        images = {}
        for name, image in self.items():
            if not isinstance(image, Image):
                continue
            if intensity_only and image.kind != INTENSITY:
                continue
            images[name] = image
        return images

    def get_images(self, intensity_only: bool = True):
        return list(self.get_images_dict(intensity_only).values())


class DeviceCache(dict):
    """The opposite case: a dict subclass that keeps GPU tensors under its keys."""

    def __init__(self, n: int):
        super().__init__()
        self["hits"] = torch.zeros(n, device="cuda")

    def hit_rate(self) -> float:
        return self["hits"].mean().item()  # error: TSL001
