"""kforge_client: rewards and environments from `kforge serve` (protocol kforge.rl/1, docs/rl.md).

Standard library only. judge(batch) judges completions; KforgeReward is a reward function for TRL's
GRPOTrainer; KernelEnv is a multi-turn environment that follows kforge generate's loop;
kforge_environment is an environment_factory for GRPOTrainer (kforge's run and submit as tools).
"""

from .client import PROTOCOL, Client, Connection, ConnectionLost, JudgeError, judge, parse_servers, servers_in
from .env import KernelEnv
from .reward import KforgeReward, kforge_reward
from .trl_env import KforgeToolEnv, kforge_environment

__all__ = ["PROTOCOL", "Client", "Connection", "ConnectionLost", "JudgeError", "judge", "parse_servers", "servers_in", "KernelEnv",
           "KforgeReward", "kforge_reward", "KforgeToolEnv", "kforge_environment"]
__version__ = "0.1.0"
