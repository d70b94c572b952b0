"""2D convolution, 3x3 kernel, stride 1, no padding, with bias (NCHW)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

B = 4
CIN = 16
COUT = 32
H = 32
W = 32


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(CIN, COUT, 3)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(B, CIN, H, W)]


def get_init_inputs():
    return []
