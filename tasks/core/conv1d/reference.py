"""1D convolution, kernel 5, stride 1, no padding, with bias (NCL)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

B = 8
CIN = 32
COUT = 64
L = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(CIN, COUT, 5)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(B, CIN, L)]


def get_init_inputs():
    return []
