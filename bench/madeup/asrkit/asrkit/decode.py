import torch


def greedy(log_probs, lengths, blank=0):
    best = log_probs.argmax(-1)
    hyps = []
    for b in range(best.size(0)):
        seq = best[b, : lengths[b]]  # SYNC
        seq = torch.unique_consecutive(seq)  # SYNC
        hyps.append(seq[seq != blank].tolist())  # SYNC
    return hyps


def edit_distance(ref, hyp):
    d = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        prev, d[0] = d[0], i
        for j, h in enumerate(hyp, 1):
            cur = min(d[j] + 1, d[j - 1] + 1, prev + (r != h))
            prev, d[j] = d[j], cur
    return d[-1]


def wer(refs, hyps):
    errors = sum(edit_distance(r, h) for r, h in zip(refs, hyps))
    words = sum(len(r) for r in refs)
    return errors / max(words, 1)


def beam_prune(scores, beam):
    top, idx = scores.topk(beam, dim=-1)
    keep = top > top[:, :1] - 10.0
    return idx[keep]  # SYNC
