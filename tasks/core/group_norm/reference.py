"""GroupNorm with G groups over NCHW input, learned per-channel affine (eps 1e-5)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

B = 8
C = 64
G = 8
H = 32
W = 32


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.gn = nn.GroupNorm(G, C)
        with torch.no_grad():
            self.gn.weight.uniform_(0.5, 1.5)
            self.gn.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        return self.gn(x)


def get_inputs():
    return [torch.randn(B, C, H, W)]


def get_init_inputs():
    return []
