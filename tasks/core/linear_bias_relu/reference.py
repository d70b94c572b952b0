"""Linear layer (learned weight and bias) followed by ReLU."""

import torch
import torch.nn as nn
import torch.nn.functional as F

T = 512
IN = 512
OUT = 384


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(IN, OUT)

    def forward(self, x):
        return torch.relu(self.fc(x))


def get_inputs():
    return [torch.randn(T, IN)]


def get_init_inputs():
    return []
