"""SwiGLU gate: SiLU of the first half of the last dimension times the second half."""

import torch
import torch.nn as nn
import torch.nn.functional as F

T = 512
H = 1024


class Model(nn.Module):
    def forward(self, x):
        a, b = x.chunk(2, dim=-1)
        return F.silu(a) * b


def get_inputs():
    return [torch.randn(T, 2 * H)]


def get_init_inputs():
    return []
