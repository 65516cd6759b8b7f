"""The model-based test of ``follow`` (see ``follow_model``), a few examples per CI run.

``scripts/follow_model.py`` runs hundreds; this keeps a small, fixed set
(``derandomize``) so CI stays fast and repeatable.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

from follow_model import FollowMachine

FollowMachine.TestCase.settings = settings(
    max_examples=6,
    stateful_step_count=10,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
test_follow_model = FollowMachine.TestCase
