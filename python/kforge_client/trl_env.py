"""kforge's tools protocol as a TRL environment: GRPOTrainer(environment_factory=kforge_environment(...)).

TRL's GRPOTrainer runs environments through `environment_factory` (the integration its OpenEnv guide
builds on): one instance per rollout, `reset(**row)` with the dataset row, the public methods offered
to the model as tools, and `get_reward()` scoring the rollout. Here the tools are kforge's `run` and
`submit`, judged by `kforge serve`; each call's result is the feedback generate would give, and the
rollout's reward is the best shaped reward of its calls (docs/rl.md).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from .client import Client


class KforgeToolEnv:
    """One rollout on one task. The dataset needs a `task_id` column (or the column named by
    `task_column`); its prompt should be the server's tools prompt (`Client.prompt(task, "tools")`)."""

    def __init__(self, client: Client, task_column: str = "task_id"):
        self._client = client
        self._task_column = task_column
        self._task: Optional[str] = None
        self._reward = 0.0
        self._calls = 0
        self.done = False
        #: The server's result of each call, in order.
        self.results: List[Dict[str, Any]] = []

    def reset(self, **row: Any) -> None:
        if self._task_column not in row:
            raise KeyError(f"kforge environment: no dataset column {self._task_column!r} among {sorted(row)}")
        self._task = row[self._task_column]
        self._reward = 0.0
        self._calls = 0
        self.done = False
        self.results = []
        return None

    def run(self, source: str, launches: list[dict], scratch: Optional[list[dict]] = None,
            options: Optional[list[str]] = None) -> str:
        """Compile, check and time a solution; returns the compiler output, the correctness check and the timing
        against the reference.

        Args:
            source: CUDA C++ source with the __global__ kernels.
            launches: The launch plan, run in order: kernel steps {kernel, grid, block, shared_bytes, args} or memset
                steps {memset, value}.
            scratch: Scratch buffers {name, dtype, shape}.
            options: NVRTC options.
        """
        return self._judge("run", source, launches, scratch, options)

    def submit(self, source: str, launches: list[dict], scratch: Optional[list[dict]] = None,
               options: Optional[list[str]] = None) -> str:
        """Hand in the final solution and end the session.

        Args:
            source: CUDA C++ source with the __global__ kernels.
            launches: The launch plan, run in order: kernel steps {kernel, grid, block, shared_bytes, args} or memset
                steps {memset, value}.
            scratch: Scratch buffers {name, dtype, shape}.
            options: NVRTC options.
        """
        return self._judge("submit", source, launches, scratch, options)

    def get_reward(self) -> float:
        """The best shaped reward of the rollout's calls (0 when it made none)."""
        return self._reward

    def _judge(self, name: str, source: str, launches: Any, scratch: Any, options: Any) -> str:
        if self._task is None:
            raise RuntimeError("kforge environment: reset() was not called")
        if self.done:
            return "Not run: an earlier call ended the episode."
        self._calls += 1
        arguments: Dict[str, Any] = {"source": source, "launches": launches}
        if scratch:
            arguments["scratch"] = scratch
        if options:
            arguments["options"] = options
        call = {"id": f"call_{self._calls}", "type": "function", "function": {"name": name, "arguments": arguments}}
        result = self._client.judge([{"task": self._task, "protocol": "tools",
                                      "completion": {"role": "assistant", "content": "", "tool_calls": [call]}}])[0]
        self.results.append(result)
        if result.get("status") == "refused":
            return "Not run: " + result.get("error", "refused by the server")
        if result.get("reward") is not None:
            self._reward = max(self._reward, float(result["reward"]))
        self.done = bool(result.get("done"))
        tool_results = result.get("tool_results") or [{"content": result.get("feedback", "")}]
        return tool_results[0]["content"]


def kforge_environment(servers: Union[None, str, Sequence[str]] = None, client: Optional[Client] = None,
                       task_column: str = "task_id", **client_args: Any) -> Callable[[], KforgeToolEnv]:
    """An `environment_factory` for TRL's GRPOTrainer: each call makes a KforgeToolEnv on one shared client."""
    shared = client or Client(servers, **client_args)
    return lambda: KforgeToolEnv(shared, task_column)
