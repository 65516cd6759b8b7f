"""The Aider adapter: a Markdown chat history read block by block.

Lines group into blocks: a run of ``#### `` lines (one input), a run of
``> `` lines (what Aider reported; a multi-line report quotes only its first
line, so a line right under a quote, with no blank line between, continues
it), and the reply text between them (blank lines inside it are paragraph
breaks). Aider ends each line it writes for an input or a report with a
Markdown line break (two spaces): where a file has them, a line counts as an
input or a report only with them, so a reply's own ``#### Heading`` or
``> quote`` stays in the reply. (A file whose trailing spaces were stripped,
by an editor before a commit, is read by the prefixes alone.)

Mapping decisions:

* The first run's header becomes ``session_meta`` (its release read from the
  banner's ``Aider vX`` line); each later header a ``system`` event
  ``run_start`` whose text is the header's local time (the file gives no
  zone, so no event carries a timestamp).
* An input becomes a ``user_message`` (``human``; commands such as ``/add``
  included, as typed). A reply becomes an ``assistant_message`` with the
  run's main model (its reasoning, which Aider writes first between its
  ``<thinking-content-…>`` tags, a ``thinking`` event before it); the ``Tokens: … Cost: …`` report right after it is its
  usage: ``sent`` is the whole prompt (cache hits included), ``received`` the
  output, the cache parts and the message's cost as printed (counts Aider
  rounded to ``1.2k`` are marked ``rounded`` in ``usage.extra``).
* Every block quote becomes a ``system`` event ``aider_output`` whose text is
  the quote (the report line included).

Aider writes no tool calls: edits are applied from the reply's text and
reported (``Applied edit to …``) in the quotes.
"""

from __future__ import annotations

import re
from typing import ClassVar, Final

import msgspec
from msgspec import Raw

from agentminutes.harness._stamp import Stamp
from agentminutes.harness.aider.vocabulary import (
    HARNESS,
    MODEL_LINE,
    QUOTE_PREFIX,
    REASONING,
    RUN_HEADER,
    TOKENS_LINE,
    USER_PREFIX,
    VERSION_LINE,
    token_count,
)
from agentminutes.harness.base import BaseAdapter, Confidence, ParseOptions, SkipHook
from agentminutes.schema import (
    AssistantMessage,
    ContentBlock,
    Event,
    Origin,
    Provenance,
    SystemEvent,
    Thinking,
    TokenUsage,
    UserMessage,
)

__all__ = ("AiderAdapter",)

_USER: Final = "user"
_QUOTE: Final = "quote"
_REPLY: Final = "reply"


class AiderAdapter(BaseAdapter):
    """Parses ``.aider.chat.history.md`` files (appended to, so followed line by line)."""

    name: ClassVar[str] = HARNESS
    last_checked: ClassVar[str] = "0.86.1"
    #: Lines are fed with their indentation (a reply's code keeps its layout).
    keeps_indent: ClassVar[bool] = True

    def __init__(self, options: ParseOptions | None = None, *, on_skip: SkipHook | None = None):
        super().__init__(options, on_skip=on_skip)
        self.kind = ""
        self.lines: list[tuple[int, str]] = []
        #: Whether the file marks Aider's own lines with a two-space break (None: not seen yet).
        self.marked: bool | None = None
        self.model = ""
        #: The header of the run whose opening event is not out yet: (line, local time, raw).
        self.run: tuple[int, str, bytes] | None = None
        self.runs = 0
        self.started = False
        #: A reply, held until the quote under it (its usage report) is read.
        self.reply: Event | None = None

    @classmethod
    def sniff(cls, head: bytes) -> Confidence:
        for raw in head.lstrip(b"\xef\xbb\xbf").splitlines():
            line = raw.strip()
            if not line:
                continue
            return Confidence.CERTAIN if RUN_HEADER.match(line) else Confidence.NO_MATCH
        return Confidence.NO_MATCH

    # -- feeding ----------------------------------------------------------------------

    def feed(self, line: bytes, lineno: int) -> list[Event]:
        text = line.decode("utf-8", "replace").rstrip("\r\n")
        broken = text.endswith("  ")
        text = text.rstrip()
        bare = text.strip()
        out: list[Event] = []
        header = RUN_HEADER.match(bare.encode())
        if header:
            self._close(out)
            self._flush_reply(out)
            self._open_run(out)
            self.run = (lineno, header.group(1).decode(), line)
            self.runs += 1
            return out
        kind = self._kind(bare, lineno, broken)
        if kind != self.kind or (kind != _REPLY and self.lines and lineno > self.lines[-1][0] + 1):
            self._close(out)
            self.kind = kind
        self.lines.append((lineno, text))
        return out

    def _kind(self, bare: str, lineno: int, broken: bool) -> str:
        raw = bare.encode()
        for prefix, kind in ((USER_PREFIX, _USER), (QUOTE_PREFIX, _QUOTE)):
            if raw == prefix or raw.startswith(prefix + b" "):
                if self.marked is None:
                    self.marked = broken
                if broken or not self.marked:
                    return kind
        if self.kind == _QUOTE and self.lines and lineno == self.lines[-1][0] + 1:
            return _QUOTE  # a multi-line report: only its first line is quoted
        return _REPLY

    def finish(self) -> list[Event]:
        out: list[Event] = []
        self._close(out)
        self._flush_reply(out)
        self._open_run(out)
        return out

    # -- blocks -----------------------------------------------------------------------

    def _close(self, out: list[Event]) -> None:
        lines, kind = self.lines, self.kind
        if not lines:
            return
        self.lines, self.kind = [], ""
        last = lines[-1][0]
        if kind == _QUOTE:
            texts = [_unquote(t) for _, t in lines]
            self._banner(texts)
            self._open_run(out)
            usage = None
            for t in texts:
                m = TOKENS_LINE.match(t)
                if m:
                    usage = _usage(m)
                    break
            reply = self.reply
            if reply is not None and reply.assistant_message is not None and usage is not None:
                reply.assistant_message.usage = usage
                if reply.provenance is not None and not self.options.keep_raw:
                    reply.provenance.end_line = last
            self._flush_reply(out)
            said = SystemEvent(subtype="aider_output", text="\n".join(texts))
            out.append(Stamp("", self._prov(lines)).system(said))
            return
        self._open_run(out)
        self._flush_reply(out)
        if kind == _USER:
            texts = [_unprefix(t) for _, t in lines]
            body = "\n".join(texts)
            typed = [ContentBlock(kind="text", text="" if body == "<blank>" else body)]
            out.append(
                Stamp("", self._prov(lines)).user_message(
                    UserMessage(origin=Origin.HUMAN, content=typed)
                )
            )
            return
        # A reply: blank lines the feeder passed over come back as paragraph breaks.
        parts: list[str] = []
        prev = lines[0][0]
        for n, t in lines:
            parts.extend([""] * max(0, n - prev - 1))
            parts.append(t)
            prev = n
        body = "\n".join(parts).strip("\n")
        thought = REASONING.match(body)
        if thought is not None:
            # A streamed reply of a reasoning model: Aider writes the reasoning first,
            # between its own tags, then the answer.
            reasoning = Thinking(text=thought.group(2).strip("\n"))
            out.append(Stamp("", self._prov(lines)).thinking(reasoning))
            body = body[thought.end() :].strip("\n")
        answer = AssistantMessage(model=self.model, content=[ContentBlock(kind="text", text=body)])
        self.reply = Stamp("", self._prov(lines)).assistant_message(answer)

    def _flush_reply(self, out: list[Event]) -> None:
        if self.reply is not None:
            out.append(self.reply)
            self.reply = None

    def _banner(self, texts: list[str]) -> None:
        """Read the release and the main model from a run's start-up banner."""
        for t in texts:
            m = VERSION_LINE.match(t)
            if m and self.run is not None:
                self.version = m.group(1)
                continue
            m = MODEL_LINE.match(t)
            if m:
                self.model = m.group(1)

    def _open_run(self, out: list[Event]) -> None:
        """Emit the pending run's opening event: ``session_meta`` for the first."""
        if self.run is None:
            if not self.started and (self.lines or self.reply is not None):
                # Input that begins mid-run (a cut file): the stream still opens first.
                self.started = True
                out.append(self.session_meta(None, harness_version=self.effective_version))
            return
        lineno, stamp, raw = self.run
        self.run = None
        prov = self.prov(raw, lineno)
        if not self.started:
            self.started = True
            out.append(self.session_meta(prov, harness_version=self.effective_version))
            return
        ran = Raw(msgspec.json.encode({"version": self.version, "model": self.model}))
        out.append(
            Stamp("", prov).system(SystemEvent(subtype="run_start", text=stamp, details=ran))
        )

    def _prov(self, lines: list[tuple[int, str]]) -> Provenance:
        first, last = lines[0][0], lines[-1][0]
        if self.options.keep_raw:
            raw = Raw(msgspec.json.encode("\n".join(t for _, t in lines)))
            return Provenance(line=first, end_line=last, raw=[raw])
        return Provenance(line=first, end_line=last)


def _unquote(text: str) -> str:
    bare = text.strip()
    if bare == ">":
        return ""
    if bare.startswith("> "):
        return bare[2:].strip()
    return bare


def _unprefix(text: str) -> str:
    bare = text.strip()
    if bare == "####":
        return ""
    return bare[5:].rstrip() if bare.startswith("#### ") else bare


def _usage(m: re.Match[str]) -> TokenUsage:
    sent, r1 = token_count(m.group("sent"))
    received, r2 = token_count(m.group("received"))
    write, r3 = token_count(m.group("write")) if m.group("write") else (0, False)
    hit, r4 = token_count(m.group("hit")) if m.group("hit") else (0, False)
    extra: dict[str, Raw] = {}
    if r1 or r2 or r3 or r4:
        extra["rounded"] = Raw(b"true")
    cost = None
    if m.group("cost"):
        cost = float(m.group("cost").replace(",", ""))
        extra["session_cost"] = Raw(msgspec.json.encode(float(m.group("session").replace(",", ""))))
    return TokenUsage(
        input_tokens=sent,
        output_tokens=received,
        cache_read_input_tokens=hit,
        cache_creation_input_tokens=write,
        cost=cost,
        extra=extra or None,
    )
