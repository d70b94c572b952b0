"""ReLU over 2^36 float32 elements (test-only: 256 GiB, more than any single GPU holds)."""

import torch
import torch.nn as nn

N = 2**36


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(N)]


def get_init_inputs():
    return []
