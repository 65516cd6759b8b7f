"""Antigravity CLI: ``brain/<conversation>/.system_generated/logs/transcript_full.jsonl``."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Final

from agentminutes.errors import AgentminutesError, ParseError, ScanError
from agentminutes.harness.layout import (
    Gathered,
    Item,
    Locator,
    Root,
    ScanContext,
    SessionRef,
    check_session_id,
    clean,
    is_dir_entry,
    join,
    path_exists,
    walk_files,
)
from agentminutes.schema import TaskSkip

#: An Antigravity conversation's transcript, relative to its folder.
_AG_TRANSCRIPT: Final = ".system_generated/logs/transcript_full.jsonl"
_CHILD_ID = re.compile(r'"conversationId":\s*"([^"]+)"')


class AntigravityLocator(Locator):
    """``<root>/<conversation id>/.system_generated/logs/transcript_full.jsonl`` plus artifacts.

    The transcript records no session id or cwd: the conversation's folder name
    is its session id. Subagent conversations are named only in the parent's
    ``invoke_subagent`` results (a content join), and are followed recursively.
    """

    harness = "antigravity"
    join = "content"

    def scan(self, root: str, ctx: ScanContext) -> Iterator[Item]:
        entries = yield from self._listing(root)
        if entries is None:
            return
        for e in entries:
            folder = join(root, e.name)
            if not is_dir_entry(e):
                ctx.skip(folder, "not a conversation directory")
                continue
            transcript = self._folder_transcript(folder, _AG_TRANSCRIPT, "conversation", ctx)
            if transcript is None:
                continue
            for item in self._ref(transcript, ctx):
                if isinstance(item, SessionRef):
                    item.meta.session_id = e.name
                yield item

    def locate(
        self, root: str, session_id: str, *, archive: bool = False, nested: bool = False
    ) -> SessionRef | None:
        check_session_id(session_id)
        transcript = join(root, session_id, _AG_TRANSCRIPT)
        if not path_exists(transcript):
            return None
        ref = self._strict_ref(transcript)
        ref.meta.session_id = session_id
        return ref

    def gather(self, roots: list[Root], parent: SessionRef, ctx: ScanContext) -> Gathered:
        out = Gathered(join=self.join)
        root = next((r.path for r in roots if not r.archive), "")
        if not parent.meta.session_id:
            parent.meta.session_id = conversation_id_of(parent.path)
        seen = {parent.meta.session_id}

        def walk(ref: SessionRef) -> None:
            for child_id in self._children(ref.path):
                if child_id in seen:
                    continue
                seen.add(child_id)
                child = self.locate(root, child_id)
                if child is None:
                    out.skipped.append(
                        TaskSkip(path=child_id, reason="child conversation not found under root")
                    )
                    continue
                out.subagents.append(child)
                walk(child)

        walk(parent)
        return out

    def _children(self, path: str) -> list[str]:
        ids: list[str] = []
        try:
            for ev in self.reader.events(self.harness, path):
                res = ev.tool_result
                if res is None or res.tool_name != "invoke_subagent":
                    continue
                text = "\n".join(b.text for b in res.content or () if b.kind == "text")
                ids.extend(m[1] for m in _CHILD_ID.finditer(text))
        except ParseError as exc:
            raise ScanError(self.harness, str(exc.with_path("")), path) from None
        except AgentminutesError as exc:
            raise ScanError(self.harness, str(exc), path) from None
        return ids

    def sidecars(self, ref: SessionRef) -> list[str]:
        folder = conversation_folder(ref.path)
        if not folder:
            return []
        return [f for f in walk_files(folder) if f != ref.path]


def conversation_folder(path: str) -> str:
    """The conversation folder an Antigravity transcript sits in, or ``""`` outside the layout."""
    suffix = "/" + _AG_TRANSCRIPT
    cleaned = clean(path)
    if not cleaned.endswith(suffix):
        return ""
    folder = cleaned[: -len(suffix)]
    return folder if os.path.basename(folder) not in ("", ".", "..") else ""


def conversation_id_of(path: str) -> str:
    """An Antigravity transcript's conversation id (its folder name), or ``""`` outside the layout."""
    return os.path.basename(conversation_folder(path))
