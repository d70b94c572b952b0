"""LayerNorm over the last dimension with learned weight and bias (eps 1e-5)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

T = 1024
D = 768


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(D)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(T, D) * 2 + 1]


def get_init_inputs():
    return []
