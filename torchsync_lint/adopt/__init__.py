"""Adoption: apply what the records describe. Fixes (``fixes``), baselines (``baseline``) and
``# noqa`` comments written into files (``add_noqa``). The commands that drive them are in ``cli/``."""
