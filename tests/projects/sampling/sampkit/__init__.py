"""Frequency across files: a sampling pipeline, schedulers called by method name, a decoder."""
