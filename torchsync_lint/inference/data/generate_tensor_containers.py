"""Regenerate tensor_containers.json from the installed tensordict: which classes are tensor
containers, and what each method of theirs returns, read from its annotations.

    python -m torchsync_lint.inference.data.generate_tensor_containers          # write the file
    python -m torchsync_lint.inference.data.generate_tensor_containers --check  # exit 1 when it is stale

A ``TensorDict`` holds tensors (or nested TensorDicts) under string keys and behaves as a tensor
along its batch dimensions: ``td["next", "done"]`` is a tensor, ``td.to(d)`` and ``td[mask]`` a
TensorDict, ``td.any()`` a Python bool (which reads every leaf on the host). The linter reads the
JSON through ``inference.containers`` and never imports tensordict or this module.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import sys
import typing

DATA_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tensor_containers.json")

# an annotation's text -> what a call returns: the container itself, one of its leaves (a tensor),
# a Python bool or int, a tuple of containers, or nothing known
_KINDS = (
    (("Self", "T", "TensorDictBase", "'TensorDictBase'", "TensorDict", "'TensorDict'"), "container"),
    (("CompatibleType", "Tensor", "torch.Tensor"), "item"),
    (("bool", "bool | TensorCollection"), "bool"),
    (("int",), "int"),
    (("tuple[TensorDictBase, ...]", "tuple[TensorCollection, ...]", "Tuple[T, ...]"), "containers"),
)


def _text(annotation) -> str:
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", None) or str(annotation)
    return text.replace("typing.", "")


def _kind(annotation) -> str:
    text = _text(annotation)
    for names, kind in _KINDS:
        if text in names:
            return kind
    return "unknown"


def generate() -> dict:
    import tensordict  # only here: the linter never imports it
    from tensordict import TensorDictBase

    classes = set()
    for name in dir(tensordict):
        obj = getattr(tensordict, name)
        if isinstance(obj, type) and issubclass(obj, TensorDictBase):
            classes.add("tensordict." + name)
            classes.add(f"{obj.__module__}.{obj.__qualname__}")
    methods = {}
    properties = {}
    for name, attr in inspect.getmembers(TensorDictBase):
        if name.startswith("_") and name not in ("__getitem__", "__len__", "__bool__", "__iter__"):
            continue
        if isinstance(inspect.getattr_static(TensorDictBase, name), property):
            hints = typing.get_type_hints(attr.fget) if attr.fget is not None else {}
            ret = hints.get("return", inspect.signature(attr.fget).return_annotation if attr.fget else None)
            text = _text(ret) if ret is not None else ""
            properties[name] = ("size" if text in ("torch.Size", "Size") else "device" if "device" in text
                                else _kind(ret) if ret is not None else "unknown")
            continue
        if not callable(attr):
            continue
        try:
            ret = inspect.signature(attr).return_annotation
        except (TypeError, ValueError):
            continue
        kind = _kind(ret) if ret is not inspect.Signature.empty else "unknown"
        if kind != "unknown":
            methods[name] = kind
    # iterating a TensorDict walks its first batch dimension (``__iter__ -> Iterator[TensorDictBase]``)
    return {
        "format": 1,
        "generated_by": "python -m torchsync_lint.inference.data.generate_tensor_containers",
        "tensordict_version": tensordict.__version__,
        "classes": sorted(classes),
        "methods": dict(sorted(methods.items())),
        "properties": {k: v for k, v in sorted(properties.items()) if v != "unknown"},
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when the checked-in file differs")
    args = ap.parse_args(argv)
    data = generate()
    text = json.dumps(data, indent=1, sort_keys=True) + "\n"
    if args.check:
        with open(DATA_PATH) as fh:
            same = fh.read() == text
        print("tensor_containers.json is " + ("up to date" if same else "stale: regenerate it"))
        return 0 if same else 1
    with open(DATA_PATH, "w") as fh:
        fh.write(text)
    print(f"wrote {DATA_PATH}: {len(data['classes'])} classes, {len(data['methods'])} methods")
    return 0


if __name__ == "__main__":
    sys.exit(main())
