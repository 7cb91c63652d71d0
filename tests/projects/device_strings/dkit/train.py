from dkit.bounds import Bounds, Sampler
from dkit.table import Table


def run(xs):
    b = Bounds(0.0, 1.0)
    b.make("cpu")
    t = Table([[1, 2], [3, 4]])
    s = Sampler(10)  # the default: on the host
    out = []
    for x in xs:
        rows = t.to_device("cuda")
        idx = s.draw()
        picked = idx.tolist()  # ok: drawn on the host
        out.append((x, rows, picked, b.lo))
    return out
