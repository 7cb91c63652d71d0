from .typing import FloatTensor, LongTensor  # re-exported: other modules import them from here

__all__ = ["FloatTensor", "LongTensor"]
