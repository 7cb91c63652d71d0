"""A backend chosen at run time: its names are set with setattr, none is bound in this file."""
import importlib
import sys

from . import backend


def load_backend(name):
    mod = importlib.import_module(name)
    for api in backend.__dict__:
        if not api.startswith("__"):
            setattr(sys.modules[__name__], api, getattr(mod, api, None))
