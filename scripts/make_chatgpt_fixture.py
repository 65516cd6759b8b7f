#!/usr/bin/env python3
"""Cut the committed ChatGPT fixture out of the genuine export in the shared corpus.

Usage:
  python scripts/make_chatgpt_fixture.py [EXPORT] [OUT]

EXPORT defaults to ../shared/corpus/other/my-chat-gpt__chatgpt_export_conversations.json
(a genuine ChatGPT data export, June 2023), OUT to fixtures/chatgpt/conversations.json.

The fixture is a subset of the export's conversations, selected by what they
exercise, not by content, and kept small: for each feature, the smallest
conversations that have it (two with tool messages: the export's browsing and
plugin calls; one each with an abandoned branch, with a message still
``in_progress``, with a message without ``create_time``, with no assistant
reply at all), plus the first three plain ones. The selected conversations are
copied byte for byte (each one's JSON exactly as exported), in export order,
into a JSON array.
"""

from __future__ import annotations

import sys
from pathlib import Path

import msgspec

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_EXPORT = (
    ROOT.parent / "shared" / "corpus" / "other" / "my-chat-gpt__chatgpt_export_conversations.json"
)
DEFAULT_OUT = ROOT / "fixtures" / "chatgpt" / "conversations.json"


class Author(msgspec.Struct):
    role: str


class Message(msgspec.Struct):
    author: Author
    status: str | None = None
    create_time: float | None = None


class Node(msgspec.Struct):
    parent: str | None = None
    children: list[str] = []
    message: Message | None = None


class Conversation(msgspec.Struct):
    mapping: dict[str, Node]


def features(conv: Conversation) -> set[str]:
    found = set()
    roles = set()
    for node in conv.mapping.values():
        if len(node.children) > 1:
            found.add("branch")
        msg = node.message
        if msg is None:
            continue
        roles.add(msg.author.role)
        if msg.status == "in_progress":
            found.add("in_progress")
        if msg.create_time is None:
            found.add("no_time")
    if "tool" in roles:
        found.add("tool")
    if "assistant" not in roles:
        found.add("no_answer")
    return found


#: How many of the smallest conversations to take for each feature.
WANTED = {"tool": 2, "branch": 1, "in_progress": 1, "no_time": 1, "no_answer": 1}


def main() -> int:
    export = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_EXPORT
    out = Path(sys.argv[2]) if len(sys.argv) > 2 else DEFAULT_OUT
    raws = msgspec.json.decode(export.read_bytes(), type=list[msgspec.Raw])
    found = [features(msgspec.json.decode(raw, type=Conversation)) for raw in raws]
    chosen: set[int] = set()
    for feature, count in WANTED.items():
        having = sorted((len(raws[i]), i) for i, f in enumerate(found) if feature in f)
        chosen.update(i for _, i in having[:count])
    chosen.update([i for i, f in enumerate(found) if not f][:3])
    picked = [bytes(raws[i]) for i in sorted(chosen)]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(b"[" + b", ".join(picked) + b"]")
    print(f"{out}: {len(picked)} of {len(raws)} conversations, {out.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
