"""Finding sessions where the harnesses keep them, and copying them away.

- :mod:`~agentminutes.discovery.roots` — each harness's default folders;
- :mod:`~agentminutes.discovery.layouts` — which files under a root are sessions, and their subagents;
- :mod:`~agentminutes.discovery.sessions` — ``scan``/``locate`` and the ``sessions`` command;
- :mod:`~agentminutes.discovery.task` — a session joined with its subagents (``stats --include-subagents``);
- :mod:`~agentminutes.discovery.archive` — ``archive``: copies, normalized JSON, a manifest.
"""
