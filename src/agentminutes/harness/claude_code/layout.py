"""Claude Code: ``projects/<project>/<session>.jsonl``, subagents in ``<session>/subagents/``."""

from __future__ import annotations

import os
from collections.abc import Iterator

from agentminutes.errors import ScanError
from agentminutes.harness.layout import (
    Gathered,
    Item,
    Locator,
    Root,
    ScanContext,
    SessionRef,
    check_session_id,
    is_dir_entry,
    is_dir_path,
    join,
    list_entries,
    walk_files,
)


class ClaudeCodeLocator(Locator):
    """``<root>/<project>/<session>.jsonl``; subagents in ``<session>/subagents/agent-*.jsonl``.

    The project folder's name is the working directory with every character
    other than letters, digits and ``-`` replaced (lossy), so ``--cwd`` uses
    the recorded cwd, never the folder name. A session folder without its
    transcript (the parent file was deleted) yields each subagent transcript
    as a session of its own.
    """

    harness = "claude-code"
    join = "layout"

    def scan(self, root: str, ctx: ScanContext) -> Iterator[Item]:
        for project in self._projects(root, ctx):
            if isinstance(project, ScanError):
                yield project
            else:
                yield from self._project(*project, ctx)

    def _project(
        self, folder: str, entries: list[os.DirEntry[str]], ctx: ScanContext
    ) -> Iterator[Item]:
        sessions: dict[str, str] = {}
        dirs: dict[str, str] = {}
        for e in entries:
            path = join(folder, e.name)
            if is_dir_entry(e):
                dirs[e.name] = path
            elif e.name.endswith(".jsonl"):
                sessions[e.name[: -len(".jsonl")]] = path
            else:
                ctx.skip(path, "not a session transcript")
        for stem in sorted(sessions):
            subagents = self.subagents(dirs.get(stem, ""), ctx)
            for item in self._ref(sessions[stem], ctx):
                if isinstance(item, SessionRef):
                    item.subagent_paths = subagents or None
                yield item
        for stem in sorted(dirs):
            if stem in sessions:
                continue
            for agent in self.subagents(dirs[stem], ctx):
                yield from self._ref(agent, ctx)

    def subagents(self, session_dir: str, ctx: ScanContext) -> list[str]:
        """The subagent transcripts in a session folder (``""`` for none), skipping the rest."""
        if not session_dir:
            return []
        try:
            entries = list_entries(session_dir)
        except OSError:
            ctx.skip(session_dir, "unreadable session directory")
            return []
        agents: list[str] = []
        nested: list[str] = []
        for e in entries:
            path = join(session_dir, e.name)
            if e.name != "subagents":
                ctx.skip_tree(path, is_dir_entry(e), "session directory sidecar")
                continue
            try:
                subs = list_entries(path)
            except OSError:
                ctx.skip(path, "unreadable subagents directory")
                continue
            for s in subs:
                sub = join(path, s.name)
                if is_dir_entry(s):
                    if ctx.nested:
                        nested.extend(self._nested(sub, ctx))
                    else:
                        ctx.skip_tree(sub, True, "not a subagent transcript")
                elif _is_agent(s.name):
                    agents.append(sub)
                else:
                    ctx.skip(sub, "not a subagent transcript")
        return sorted(agents) + nested

    def _nested(self, folder: str, ctx: ScanContext) -> list[str]:
        found: list[str] = []
        for path in walk_files(folder):
            if _is_agent(os.path.basename(path)):
                found.append(path)
            else:
                ctx.skip(path, "not a subagent transcript")
        return found

    def locate(
        self, root: str, session_id: str, *, archive: bool = False, nested: bool = False
    ) -> SessionRef | None:
        check_session_id(session_id)
        matches = []
        try:
            projects = list_entries(root)
        except OSError:
            projects = []
        for proj in projects:
            candidate = join(root, proj.name, session_id + ".jsonl")
            if is_dir_path(join(root, proj.name)) and os.path.lexists(candidate):
                matches.append(candidate)
        path = self._resolve(root, session_id, matches)
        if path is None:
            return None
        session_dir = path[: -len(".jsonl")]
        ctx = ScanContext(nested=nested)
        subagents = self.subagents(session_dir if is_dir_path(session_dir) else "", ctx)
        ref = self._strict_ref(path)
        ref.subagent_paths = subagents or None
        return self._confirm(ref, session_id)

    def gather(self, roots: list[Root], parent: SessionRef, ctx: ScanContext) -> Gathered:
        paths = parent.subagent_paths
        if paths is None:
            session_dir = parent.path[: -len(".jsonl")] if parent.path.endswith(".jsonl") else ""
            paths = self.subagents(session_dir if is_dir_path(session_dir) else "", ctx)
        return Gathered(join=self.join, subagents=[self._strict_ref(p) for p in paths])

    def sidecars(self, ref: SessionRef) -> list[str]:
        if not ref.path.endswith(".jsonl") or ref.meta.is_subagent:
            return []
        session_dir = ref.path[: -len(".jsonl")]
        return list(walk_files(session_dir)) if is_dir_path(session_dir) else []

    def nested_count(self, parent: SessionRef) -> int:
        """How many nested subagent transcripts a non-nested gather leaves out."""
        if not parent.path.endswith(".jsonl"):
            return 0
        subagents = join(parent.path[: -len(".jsonl")], "subagents")
        if not is_dir_path(subagents):
            return 0
        return sum(
            1
            for path in walk_files(subagents)
            if os.path.dirname(path) != subagents and _is_agent(os.path.basename(path))
        )


def _is_agent(name: str) -> bool:
    return name.startswith("agent-") and name.endswith(".jsonl")
