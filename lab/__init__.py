"""The lab: ground truth from the real harness CLIs.

A scripted model server (:mod:`lab.server`) speaks the wire protocols the harnesses use
(Anthropic Messages, OpenAI Chat Completions and Responses, Gemini) on 127.0.0.1 and answers
each request with the next step of a scenario (:mod:`lab.scenario`, data in
``lab/scenarios/``), recording what it billed and which tool calls it asked for. Drivers
(:mod:`lab.drivers`) run a real CLI headless against it in a temporary HOME; :mod:`lab.record`
collects the transcripts it wrote, exactly as written, with that ground truth.

The lab is test tooling, not part of the library: it lives beside ``src/``, ``tests/`` and
``scripts/`` (``scripts/lab.py`` records, ``tests/lab/`` checks the server and reads the
recordings under ``fixtures/lab/``), so the wheel never ships it and ``agentminutes`` never
imports it. Standard library only.
"""
