import torch


def temporal_subsample(video, clip_len):
    # one caller in another file passes a GPU tensor, another a parameter nobody passes:
    # the evidence wins over the gap, as it does for the calls of the file itself
    idx = torch.linspace(0, video.shape[1] - 1, clip_len).long()
    return video[:, idx]  # error: TSL201
