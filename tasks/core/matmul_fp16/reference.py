"""Multiply two float16 matrices (float16 result)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 512
K = 256
N = 512


class Model(nn.Module):
    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(M, K).half(), torch.randn(K, N).half()]


def get_init_inputs():
    return []
