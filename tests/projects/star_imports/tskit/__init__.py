from .utils import *  # the package re-exports what `utils.__all__` lists
