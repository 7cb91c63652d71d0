# named check_*: pytest must not run it (it moves a tensor to "cuda"); a module of the package's tests all the same
import torch

from asrlite.processors import Passthrough, Processor


def test_prepare():
    # a package's tests pass toy host tensors: what the API takes, not where real batches live
    out = Processor("cpu").prepare({"x": torch.zeros(2)})
    assert out["x"].shape == (2,)


def test_finish():
    assert Passthrough().finish({"x": torch.zeros(2)}).device.type == "cuda"
