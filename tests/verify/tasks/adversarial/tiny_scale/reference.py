"""Scale a float32 vector by 1e-6 (test-only: near-zero but meaningful output)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 4096


class Model(nn.Module):
    def forward(self, x):
        return x * 1e-6


def get_inputs():
    return [torch.randn(N)]


def get_init_inputs():
    return []
