"""agentminutes: coding-agent session transcripts as one normalized, versioned event stream."""

from agentminutes._version import __version__

__all__ = ("__version__",)
