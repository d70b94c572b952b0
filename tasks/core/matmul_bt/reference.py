"""Multiply A by the transpose of B (both row-major)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 512
K = 512
N = 256


class Model(nn.Module):
    def forward(self, A, B):
        return A @ B.T


def get_inputs():
    return [torch.randn(M, K), torch.randn(N, K)]


def get_init_inputs():
    return []
