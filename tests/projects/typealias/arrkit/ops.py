"""Array-agnostic helpers (numpy or torch): a tensor on the GPU path syncs where an array would not."""

import numpy as np

from arrkit import NdarrayOrTensor
from arrkit.convert import convert_data_type
from arrkit.types import ArrayLike, MaybeCount, Names


def rescale(arr: NdarrayOrTensor, minv: float = 0.0) -> NdarrayOrTensor:
    arr, *_ = convert_data_type(arr)
    mina = arr.min()
    maxa = arr.max()
    if mina == maxa:  # error: TSL302
        return arr * minv
    return (arr - mina) / (maxa - mina)


def crop(img: ArrayLike, mask: ArrayLike):
    if not mask.any():  # error: TSL302
        return img
    return img


def host_only(values: np.ndarray, count: MaybeCount, names: Names):
    # numpy arrays, Python ints and lists: nothing here can sync
    if values.any():
        return names
    if count:
        return names[:count]
    return names
