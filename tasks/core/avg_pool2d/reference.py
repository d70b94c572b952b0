"""2x2 average pooling with stride 2 (NCHW); odd trailing rows/columns are dropped."""

import torch
import torch.nn as nn
import torch.nn.functional as F

B = 8
C = 32
H = 64
W = 64


class Model(nn.Module):
    def forward(self, x):
        return F.avg_pool2d(x, 2)


def get_inputs():
    return [torch.randn(B, C, H, W)]


def get_init_inputs():
    return []
