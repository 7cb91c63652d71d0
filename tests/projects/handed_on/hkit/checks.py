import torch


def over(t, lim):
    if t > lim:  # error: TSL302
        return 1
    return 0


def under(t, lim):
    if t < lim:  # ok: every call passes Python numbers
        return 1
    return 0


def scaled(scale, t):
    return t.item() * scale  # error: TSL001


def first_row(t):
    return t[0]
