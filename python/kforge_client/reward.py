"""kforge as a reward function for TRL's GRPOTrainer (reward_funcs=[KforgeReward(...)])."""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Union

from .client import Client


class KforgeReward:
    """A reward function: `reward(prompts, completions, **kwargs) -> list[float]`.

    The task of each completion comes from the dataset column `task_column` (TRL passes every column
    of the dataset to reward functions as keyword arguments). A completion may be a string (standard
    format) or a list of messages (conversational format); for the latter the last assistant message
    is judged, with its tool calls when it has any. The reward is the server's shaped reward
    (docs/rl.md); a completion that kforge itself failed to judge (harness_error) gets
    `harness_error_reward` (None by default: TRL then leaves it out of the mean).
    """

    def __init__(self, client: Optional[Client] = None, servers: Union[None, str, Sequence[str]] = None,
                 task_column: str = "task_id", protocol: Optional[str] = None,
                 harness_error_reward: Optional[float] = None, **client_args: Any):
        self.client = client or Client(servers, **client_args)
        self.task_column = task_column
        self.protocol = protocol
        self.harness_error_reward = harness_error_reward
        self.__name__ = "kforge"  # TRL logs each reward function under its __name__
        #: The results of the last call, for logging (status, feedback, components).
        self.last_results: List[dict] = []

    def __call__(self, prompts: Any = None, completions: Optional[Sequence[Any]] = None,
                 **kwargs: Any) -> List[Optional[float]]:
        if completions is None:
            raise TypeError("KforgeReward needs completions")
        if self.task_column not in kwargs:
            raise KeyError(f"KforgeReward: no dataset column {self.task_column!r} among {sorted(kwargs)}")
        tasks = kwargs[self.task_column]
        if len(tasks) != len(completions):
            raise ValueError(f"KforgeReward: {len(completions)} completions but {len(tasks)} task ids")
        batch = []
        for task, completion in zip(tasks, completions):
            entry = {"task": task, "completion": completion}
            if self.protocol:
                entry["protocol"] = self.protocol
            batch.append(entry)
        self.last_results = self.client.judge(batch)
        rewards: List[Optional[float]] = []
        for result in self.last_results:
            reward = result.get("reward")
            rewards.append(self.harness_error_reward if reward is None else float(reward))
        return rewards


def kforge_reward(servers: Union[None, str, Sequence[str]] = None, **kwargs: Any) -> KforgeReward:
    """A KforgeReward on `servers` ($KFORGE_SERVERS when None)."""
    return KforgeReward(servers=servers, **kwargs)
