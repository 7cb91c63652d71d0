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
