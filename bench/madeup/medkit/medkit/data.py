"""Images and subjects, loaded from arrays on the host; transforms run on them in the loader's workers."""
from typing import Dict, Optional

import numpy as np
import torch

DATA = "data"
AFFINE = "affine"


class Image(dict):
    def __init__(self, array: np.ndarray, affine: Optional[np.ndarray] = None, kind: str = "intensity"):
        super().__init__()
        self[DATA] = torch.as_tensor(np.ascontiguousarray(array), dtype=torch.float32)
        self[AFFINE] = np.eye(4) if affine is None else affine
        self.kind = kind

    @property
    def data(self) -> torch.Tensor:
        return self[DATA]

    @data.setter
    def data(self, tensor: torch.Tensor) -> None:
        self[DATA] = tensor

    @property
    def shape(self):
        return tuple(self.data.shape)

    def numpy(self) -> np.ndarray:
        return self.data.numpy()


class Subject(dict):
    def __init__(self, images: Dict[str, Image]):
        super().__init__(images)

    def get_images(self, kind: Optional[str] = None):
        return [im for im in self.values() if isinstance(im, Image) and (kind is None or im.kind == kind)]


class SubjectsDataset(torch.utils.data.Dataset):
    def __init__(self, subjects, transform=None):
        self.subjects = subjects
        self.transform = transform

    def __len__(self):
        return len(self.subjects)

    def __getitem__(self, i):
        subject = self.subjects[i]
        if self.transform is not None:
            subject = self.transform(subject)
        return {name: im.data for name, im in subject.items()}
