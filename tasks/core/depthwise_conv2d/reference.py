"""Depthwise 2D convolution, 3x3 kernel, padding 1, no bias (NCHW)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

B = 4
C = 32
H = 64
W = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(C, C, 3, padding=1, groups=C, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(B, C, H, W)]


def get_init_inputs():
    return []
