from .assign import TaskAlignedAssigner
from .ops.pairs import get_pairs as pairs_of

__all__ = ["TaskAlignedAssigner", "pairs_of"]
