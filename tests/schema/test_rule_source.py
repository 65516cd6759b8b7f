"""The schema reads the harnesses' usage and prompt rules from what the registry installs."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
import agentminutes.schema.usage as usage
print("harness imported with the schema:", "agentminutes.harness" in sys.modules)
print("claude-code:", usage.USAGE_RULES["claude-code"].input_includes_cache)
print("harness imported at the first lookup:", "agentminutes.harness.registry" in sys.modules)
print("codex:", usage.USAGE_RULES["codex"].input_includes_cache)
from agentminutes.schema.stats import PROMPT_RULES
print("prompt:", PROMPT_RULES["claude-code"], "antigravity" in PROMPT_RULES)
"""


def test_the_schema_loads_alone_and_its_first_lookup_loads_the_registry() -> None:
    """Importing the schema imports no harness; a library user folding saved events with
    no harness imported still gets each harness's declared rule, not an error."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=120
    ).stdout.splitlines()
    assert out == [
        "harness imported with the schema: False",
        "claude-code: False",
        "harness imported at the first lookup: True",
        "codex: True",
        "prompt: all False",
    ]
