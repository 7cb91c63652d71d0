def greedy(scores, lengths):
    best = scores.argmax(-1)
    out = []
    for b in range(best.size(0)):
        out.append(best[b, : lengths[b]])  # error: TSL303
    return out


def first_member(pair):
    return pair


def untouched(a, b):
    # what a call on an unknown callee passes: nothing to say
    return a[: b[0]]
