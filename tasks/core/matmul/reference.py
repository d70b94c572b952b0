"""Multiply two float32 matrices."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 512
K = 512
N = 512


class Model(nn.Module):
    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
