"""Antigravity's drift vocabulary: where its format hides its churn (read by :mod:`agentminutes.drift`)."""

from __future__ import annotations

from typing import Final

from agentminutes.harness.drift_vocabulary import Vocabulary

__all__ = ("VOCABULARY",)


VOCABULARY: Final = Vocabulary(
    harness="antigravity",
    discriminators={"*": ("source", "tool_calls[].name")},
    deep={"PLANNER_RESPONSE": ("tool_calls[]",)},
)
