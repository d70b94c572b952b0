"""kforge_client: rewards and environments from `kforge serve` (protocol kforge.rl/1, docs/rl.md).

Standard library only. judge(batch) judges completions; KforgeReward is a reward function for TRL's
GRPOTrainer; KernelEnv is a multi-turn environment that follows kforge generate's loop.
"""

from .client import PROTOCOL, Client, Connection, JudgeError, judge, parse_servers
from .env import KernelEnv
from .reward import KforgeReward, kforge_reward

__all__ = ["PROTOCOL", "Client", "Connection", "JudgeError", "judge", "parse_servers", "KernelEnv",
           "KforgeReward", "kforge_reward"]
__version__ = "0.1.0"
