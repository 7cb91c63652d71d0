from .types import NdarrayOrTensor, NdarrayTensor

__all__ = ["NdarrayOrTensor", "NdarrayTensor"]
