"""Scaled vector sum alpha*x + beta*y with scalar constants alpha and beta."""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 1048576


class Model(nn.Module):
    def forward(self, x, y, alpha: float, beta: float):
        return alpha * x + beta * y


def get_inputs():
    return [torch.randn(N), torch.randn(N), 2.5, -0.5]


def get_init_inputs():
    return []
