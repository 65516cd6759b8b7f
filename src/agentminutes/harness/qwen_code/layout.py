"""Qwen Code: ``projects/<project>/chats/<session>.jsonl``, older ``tmp/<hash>/chats/session-*.json``."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

from agentminutes.harness._chats_layout import ChatsLocator
from agentminutes.harness.layout import (
    Item,
    ScanContext,
    is_dir_entry,
    join,
)


class QwenCodeLocator(ChatsLocator):
    """``<root>/<project>/chats/<session id>.jsonl`` (and legacy ``session-<time>.json``).

    Both of Qwen Code's roots have this shape: ``projects/`` (one folder per
    working directory, its path sanitized into the name) and the older
    ``tmp/`` (one folder per project hash). Everything else in a project
    folder (``logs.json``, ``/chat save`` checkpoints, shell history) is
    skipped: those are not session recordings.
    """

    harness = "qwen-code"
    join = "inline"

    def chats(
        self, folder: str, entries: list[os.DirEntry[str]], ctx: ScanContext
    ) -> Iterator[Item]:
        for e in entries:
            path = join(folder, e.name)
            if not is_dir_entry(e) and _RECORDING.fullmatch(e.name):
                yield from self._ref(path, ctx)
            else:
                ctx.skip_tree(path, is_dir_entry(e), "not a chat recording")


#: A JSONL recording (``<session id>.jsonl``) or a legacy whole-document session.
_RECORDING = re.compile(r"[^.].*\.jsonl|session-.+\.json")
