import numpy as np
import torch

from imgkit.io import spectrum_of, through, to_array, to_array_any


class ElasticDeformation:
    def deform(self, tensor: torch.Tensor, affine):
        results = []
        for component in tensor:
            image, _ = to_array(component[np.newaxis], affine)  # rows handed to numpy: `tensor` too
            results.append(component.min().item())  # ok: the row is on the host
        return results, tensor.max().item()  # ok: rows of it were handed to numpy


class Affine:
    def apply(self, image):
        out = []
        for tensor in image.data:
            through(tensor, image.affine)
            out.append(self.pad_value(tensor))
        return out

    def pad_value(self, tensor: torch.Tensor) -> float:
        return tensor.min().item()  # ok: the only caller passes a row it hands to numpy


class Pad:
    def apply(self, subject):
        for image in subject.images():
            constant = image.data.float().mean().item()  # ok: `image.data` is handed to numpy below
            padded = np.pad(image.data.numpy(), 2, constant_values=constant)
            image.set_data(torch.as_tensor(padded))
        return subject

    def apply_moved(self, image):
        constant = image.data.float().mean().item()  # error: TSL001
        image.data = image.data.cuda()  # the path holds another tensor after this
        return np.asarray(image.data), constant


class Spectrum:
    def on_device(self, tensor: torch.Tensor):
        to_array_any(tensor)
        return tensor.abs().max().item()  # error: TSL001

    def rebound(self, tensor: torch.Tensor, affine):
        tensor = tensor.cuda()
        to_array(tensor, affine)
        return tensor.sum().item()  # error: TSL001

    def tested(self, data, affine):
        if isinstance(data, torch.Tensor):
            return data.mean().item()  # error: TSL001
        return to_array(data, affine)

    def artifact(self, tensor: torch.Tensor):
        spectrum = spectrum_of(tensor)
        return spectrum, tensor.abs().max().item()  # error: TSL001
