import numpy as np
import torch


def uniform_indices(num_frames, clip_len):
    return torch.linspace(0, num_frames - 1, clip_len).round().long()


def random_clip(video, clip_len, generator=None):
    t = video.shape[1]
    start = torch.randint(0, max(1, t - clip_len + 1), (1,), generator=generator).item()
    return video[:, start:start + clip_len]


def temporal_subsample(video, clip_len):
    idx = uniform_indices(video.shape[1], clip_len)
    return video[:, idx]  # SYNC


class ClipSampler:
    def __init__(self, clip_len=16, num_clips=4):
        self.clip_len = clip_len
        self.num_clips = num_clips

    def __call__(self, video):
        t = video.shape[1]
        starts = np.linspace(0, max(0, t - self.clip_len), self.num_clips).astype(int)
        return torch.stack([video[:, s:s + self.clip_len] for s in starts])
