"""Following transcripts live, as they are written (the engine behind `follow`).

- :mod:`~agentminutes.live.tail` — one growing file: identity, offsets, truncation;
- :mod:`~agentminutes.live.state` — the versioned state file a follower resumes from;
- :mod:`~agentminutes.live.follower` — many transcripts and folders, one loop;
- :mod:`~agentminutes.live.runner` — the ``follow`` command: sinks, signals, checkpoints;
- :mod:`~agentminutes.live.signals` — signals caught before the event loop starts.
"""
