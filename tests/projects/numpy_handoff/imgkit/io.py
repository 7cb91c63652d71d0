"""Conversions to other libraries' arrays: their tensor parameters are handed to numpy as they are,
so a CUDA tensor would raise there and every argument of a working caller is on the host."""
import numpy as np


def to_array(data, affine):
    array = np.asarray(data)
    return array, np.asarray(affine).astype(np.float64)


def to_array_any(data):
    # converts a GPU tensor itself: no evidence about what callers pass
    return np.asarray(data.cpu())  # error: TSL003


def through(data, affine):
    # hands its parameter on to a function that hands it to numpy
    return to_array(data[None], affine)


def spectrum_of(tensor):
    try:
        return np.fft.fftn(tensor.cpu().numpy())  # error: TSL003
    except AttributeError:
        # an old torch's fallback: says nothing of what the normal path is given
        return np.fft.fftn(tensor)
