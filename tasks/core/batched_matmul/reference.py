"""Batched matrix multiply."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
M = 128
K = 256
N = 128


class Model(nn.Module):
    def forward(self, A, B):
        return torch.bmm(A, B)


def get_inputs():
    return [torch.randn(BATCH, M, K), torch.randn(BATCH, K, N)]


def get_init_inputs():
    return []
