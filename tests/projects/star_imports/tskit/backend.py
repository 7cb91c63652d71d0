"""A host-side backend: its `unique` is numpy's, whatever the name says."""
from .imports import np

__all__ = ["unique"]


def unique(values):
    return np.unique(values)
