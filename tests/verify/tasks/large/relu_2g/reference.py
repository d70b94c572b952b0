"""ReLU over a float32 vector of 2^31 + 4096 elements (test-only: past 32-bit indexing, 8.6 GB)."""

import torch
import torch.nn as nn

N = 2**31 + 4096


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(N)]


def get_init_inputs():
    return []
