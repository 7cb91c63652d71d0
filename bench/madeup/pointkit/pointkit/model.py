import torch
import torch.nn as nn

from pointkit.ops import ball_query, farthest_point_sample, index_points


class SetAbstraction(nn.Module):
    def __init__(self, npoint, radius, nsample, in_ch, out_ch):
        super().__init__()
        self.npoint, self.radius, self.nsample = npoint, radius, nsample
        self.mlp = nn.Sequential(nn.Linear(in_ch + 3, out_ch), nn.ReLU(), nn.Linear(out_ch, out_ch))

    def forward(self, xyz, feats):
        idx = farthest_point_sample(xyz, self.npoint)
        new_xyz = index_points(xyz, idx)
        group = ball_query(self.radius, self.nsample, xyz, new_xyz)
        grouped = index_points(xyz, group) - new_xyz[:, :, None]
        if feats is not None:
            grouped = torch.cat([grouped, index_points(feats, group)], -1)
        return new_xyz, self.mlp(grouped).max(2)[0]


class PointNetPP(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.sa1 = SetAbstraction(64, 0.2, 16, 0, 64)
        self.sa2 = SetAbstraction(16, 0.4, 16, 64, 128)
        self.head = nn.Linear(128, classes)

    def forward(self, xyz):
        xyz, f = self.sa1(xyz, None)
        xyz, f = self.sa2(xyz, f)
        return self.head(f.max(1)[0])
