"""A multi-turn environment that follows generate's loop: the same prompt, the same feedback."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Tuple

from .client import Client


class KernelEnv:
    """One episode at a time on one task.

    reset(task) gives generate's opening messages (system and task prompt). step(completion) judges
    the model's reply and gives (feedback, reward, done, info): the feedback is what generate would
    send next (a user message in the text protocol, tool results in the tools protocol); done when
    the reply reached the target (compile-only: compiled cleanly), submitted, or used the last turn.
    `messages` holds the conversation so far, in OpenAI/TRL message form.
    """

    def __init__(self, client: Client, protocol: str = "text", max_turns: int = 4):
        if protocol not in ("text", "tools"):
            raise ValueError("protocol must be text or tools")
        self.client = client
        self.protocol = protocol
        self.max_turns = max_turns
        self.task: Optional[str] = None
        self.turn = 0
        self.done = True
        self.messages: List[Dict[str, Any]] = []
        self.tools: List[Dict[str, Any]] = []

    def reset(self, task: str) -> List[Dict[str, Any]]:
        opening = self.client.prompt(task, self.protocol)
        self.task = task
        self.turn = 0
        self.done = False
        self.messages = list(opening["messages"])
        self.tools = opening.get("tools", [])
        return list(self.messages)

    def step(self, completion: Any) -> Tuple[str, Optional[float], bool, Dict[str, Any]]:
        if self.task is None or self.done:
            raise RuntimeError("call reset(task) before step, and again after an episode is done")
        self.turn += 1
        message = completion if isinstance(completion, dict) else {"role": "assistant", "content": completion}
        message = dict(message, role="assistant")
        result = self.client.judge([{"task": self.task, "completion": message, "protocol": self.protocol}])[0]
        if result.get("status") == "refused":
            raise ValueError(result.get("error", "refused"))
        self.messages.append(_as_openai(message))
        if self.protocol == "tools" and result.get("tool_results"):
            for r in result["tool_results"]:
                self.messages.append({"role": "tool", "tool_call_id": r["tool_call_id"], "content": r["content"]})
        else:
            self.messages.append({"role": "user", "content": result["feedback"]})
        self.done = bool(result.get("done")) or self.turn >= self.max_turns
        return result["feedback"], result.get("reward"), self.done, result


def _as_openai(message: Dict[str, Any]) -> Dict[str, Any]:
    """The assistant message with tool-call arguments as JSON text, as chat templates expect."""
    calls = message.get("tool_calls")
    if not calls:
        return {"role": "assistant", "content": message.get("content") or ""}
    out = []
    for call in calls:
        fn = call.get("function", call)
        args = fn.get("arguments", {})
        out.append({"id": call.get("id", ""), "type": "function",
                    "function": {"name": fn.get("name", ""),
                                 "arguments": args if isinstance(args, str) else json.dumps(args)}})
    return {"role": "assistant", "content": message.get("content") or "", "tool_calls": out}
