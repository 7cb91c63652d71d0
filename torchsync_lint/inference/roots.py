"""Names inference treats as outside the project: top-level packages that are never its own (their
names are not looked up in it), and base classes of plain dicts."""

EXTERNAL_ROOTS = frozenset(
    "torch builtins numpy math os sys typing typing_extensions collections functools itertools warnings "
    "logging re json abc dataclasses enum copy pathlib time inspect contextlib operator random "
    "einops scipy pandas PIL cv2 tqdm".split()
)

# Base classes whose instances are plain dicts: a `TypedDict` annotation says which keys, not what
# the values hold, so it makes no instance of the class.
DICT_CLASSES = ("TypedDict",)


def names_tensor_base(base: str) -> bool:
    """A base class that makes a class's instances tensors: ``torch.Tensor`` or ``nn.Parameter``, or a
    class of another library named as one (``TensorBase``, ``NumpyTensor``), which only subclasses of
    ``torch.Tensor`` are. A caller first makes sure no project class has that name."""
    last = base.rsplit(".", 1)[-1]
    return base in ("torch.Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter") or (
        base.split(".")[0] != "torch" and (last.endswith("Tensor") or last == "TensorBase") and last != "Tensor")
