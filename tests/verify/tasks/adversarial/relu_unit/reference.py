"""ReLU of values in [0, 1) (test-only: the identity on its own input domain)."""

import torch
import torch.nn as nn

N = 1048576


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.rand(N)]


def get_init_inputs():
    return []
