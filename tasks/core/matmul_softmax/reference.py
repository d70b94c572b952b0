"""Matrix multiply followed by a row softmax of the product scaled by 1/sqrt(K)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 256
K = 128
N = 1024


class Model(nn.Module):
    def forward(self, A, B):
        return torch.softmax((A @ B) / (A.shape[1] ** 0.5), dim=-1)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
