"""Top-level packages that are never the project's own: their names are not looked up in it."""

EXTERNAL_ROOTS = frozenset(
    "torch builtins numpy math os sys typing typing_extensions collections functools itertools warnings "
    "logging re json abc dataclasses enum copy pathlib time inspect contextlib operator random "
    "einops scipy pandas PIL cv2 tqdm".split()
)
