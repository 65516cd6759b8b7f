"""Cline (and its forks Roo Code and Kilo Code): one task folder per session.

Where it lives: ``<VS Code globalStorage>/saoudrizwan.claude-dev/tasks/<task id>/``
(Roo Code ``rooveterinaryinc.roo-cline``, Kilo Code ``kilocode.kilo-code``), or the
CLI's ``~/.cline/data/tasks/<task id>/``; the task id is the millisecond time the
task started. The folder holds up to three JSON documents, each rewritten whole
as the task goes on:

* ``api_conversation_history.json`` — the messages sent to the model, Anthropic
  shaped: ``[{role, content}]``, content a string or blocks (``text``,
  ``image``, ``thinking``, ``redacted_thinking``, ``tool_use``, ``tool_result``);
  assistant messages carry ``modelInfo`` and, in later releases, ``metrics``
  (``tokens{prompt, completion, cached}``). Tool results come back as *user text
  blocks* headed ``[read_file for 'x'] Result:`` (or ``Tool [x] …`` when a tool was
  refused), and before native tool calling the calls themselves were XML in
  the assistant's text (``<read_file><path>x</path></read_file>``);
* ``ui_messages.json`` — what the panel showed: ``[{ts, type: say|ask, say|ask,
  text, partial, conversationHistoryIndex, …}]``; ``say: api_req_started``
  carries a JSON string with the request and ``tokensIn``, ``tokensOut``,
  ``cacheWrites``, ``cacheReads`` and ``cost`` of each API request;
* ``task_metadata.json`` — files in context, models used, and the environment
  (``cline_version``).

Some folders hold only ``ui_messages.json``; it is then the session (below), and a
``system`` event ``task_folder/missing`` (level ``warning``) right after the
``session_meta`` names the documents the folder lacks.

**Records**, for accounting, are numbered from 1 across the folder: the API
messages first, then the UI messages, then the metadata document (one record).

Mapping decisions:

* ``session_meta``: the task id (the folder's name), the Cline version from the
  metadata, the working directory from the first ``# Current Working Directory``
  line of the environment details Cline sends.
* With the API history: a user message's text blocks are ``user_message`` s —
  ``human`` for the task (``<task>``), feedback and answers, ``harness`` for
  environment details and other injected context; each tool-result block is a
  ``tool_result`` for the oldest unanswered call (by id for ``tool_result``
  blocks). An assistant message → ``thinking``, ``tool_call`` (native blocks, or
  the XML tool calls in its text), then one ``assistant_message``. Its usage is the
  ``api_req_started`` that preceded it (matched by ``conversationHistoryIndex``,
  else by order), else its ``metrics``; its time is that request's. The UI
  messages are then counted skips (``ui/<say|ask>/<kind>``): they show the same
  conversation again — except API failures and retries, which only the UI
  records (``system`` events ``ui/<kind>``).
* Without it: the UI messages are the session. The first ``say: text`` is the
  task (``human``), ``user_feedback`` too; each ``api_req_started`` opens a model
  response (usage and cost from it) that its ``reasoning`` (``thinking``),
  ``text`` and ``completion_result`` (content), ``tool`` / ``command`` /
  ``use_mcp_server`` (``tool_call``) and their outputs (``command_output``,
  ``mcp_server_response``: ``tool_result``) belong to,
  closed by one ``assistant_message``; everything else is a ``system`` event
  ``ui/<kind>``. What the UI does not show (most tool outputs) is not there.
* **Tokens** are Anthropic-shaped (input apart from cache reads and writes);
  ``cost`` is kept as Cline reported it (``usage.cost``, summed in the totals).
"""

from __future__ import annotations

import os
import re
from collections import deque
from collections.abc import Iterator
from typing import TYPE_CHECKING, ClassVar, Final

import msgspec
from msgspec import Raw

from agentminutes.harness._anthropic_wire import Block
from agentminutes.harness._content import item_block
from agentminutes.harness._shown import unseen
from agentminutes.harness._stamp import Stamp
from agentminutes.harness.base import (
    BaseDocumentAdapter,
    Confidence,
    ConversationInfo,
    DocumentSession,
    document_path,
    listed_title,
)
from agentminutes.schema import (
    NO_RAW,
    AssistantMessage,
    ContentBlock,
    Event,
    Meta,
    Origin,
    Provenance,
    SystemEvent,
    Thinking,
    TokenUsage,
    ToolCall,
    ToolKind,
    ToolResult,
    UserMessage,
)
from agentminutes.timestamps import format_ms

if TYPE_CHECKING:
    from agentminutes.harness.base import Document

__all__ = ("TOOL_KINDS", "ClineAdapter", "FolderTail")

HARNESS: Final = "cline"

API: Final = "api_conversation_history.json"
UI: Final = "ui_messages.json"
METADATA: Final = "task_metadata.json"
MEMBERS: Final = frozenset({API, UI, METADATA})

#: Cline's tool names (API history; and the UI's ``tool`` kinds) mapped onto ACP kinds.
TOOL_KINDS: Final[dict[str, str]] = {
    "read_file": ToolKind.READ,
    "readFile": ToolKind.READ,
    "write_to_file": ToolKind.EDIT,
    "replace_in_file": ToolKind.EDIT,
    "apply_diff": ToolKind.EDIT,
    "insert_content": ToolKind.EDIT,
    "search_and_replace": ToolKind.EDIT,
    "newFileCreated": ToolKind.EDIT,
    "editedExistingFile": ToolKind.EDIT,
    "execute_command": ToolKind.EXECUTE,
    "search_files": ToolKind.SEARCH,
    "searchFiles": ToolKind.SEARCH,
    "list_files": ToolKind.SEARCH,
    "listFilesTopLevel": ToolKind.SEARCH,
    "listFilesRecursive": ToolKind.SEARCH,
    "list_code_definition_names": ToolKind.SEARCH,
    "listCodeDefinitionNames": ToolKind.SEARCH,
    "codebase_search": ToolKind.SEARCH,
    "web_fetch": ToolKind.FETCH,
    "webFetch": ToolKind.FETCH,
    "browser_action": ToolKind.FETCH,
    "access_mcp_resource": ToolKind.FETCH,
    "focus_chain": ToolKind.THINK,
    "update_todo_list": ToolKind.THINK,
    "plan_mode_respond": ToolKind.SWITCH_MODE,
    "switch_mode": ToolKind.SWITCH_MODE,
}

#: Tools Cline called with XML in the assistant's text before native tool calling.
_XML_TOOLS: Final = (
    "read_file",
    "write_to_file",
    "replace_in_file",
    "execute_command",
    "search_files",
    "list_files",
    "list_code_definition_names",
    "browser_action",
    "use_mcp_tool",
    "access_mcp_resource",
    "ask_followup_question",
    "attempt_completion",
    "plan_mode_respond",
    "new_task",
    "load_mcp_documentation",
    "web_fetch",
    "apply_diff",
    "insert_content",
    "search_and_replace",
    "switch_mode",
    "codebase_search",
    "update_todo_list",
)
_XML_CALL: Final = re.compile(r"<(" + "|".join(_XML_TOOLS) + r")>(.*?)</\1>", re.DOTALL)
_XML_PARAM: Final = re.compile(r"<([a-z_]+)>(.*?)</\1>", re.DOTALL)
#: A tool result sent back as user text: ``[name for 'arg'] Result:`` or ``Tool [name …] …``.
_RESULT_HEAD: Final = re.compile(
    r"^\s*(?:\[(?P<name>[\w-]+)(?: for '.*?')?\] Result:|Tool \[(?P<refused>[\w-]+)[^\]]*\])",
    re.DOTALL,
)
_CWD: Final = re.compile(r"# Current Working Directory \((.+?)\) Files")
_HUMAN_TAGS: Final = ("<task>", "<feedback>", "<answer>", "<user_message>")
#: UI kinds only the UI records (API failures and retries): events even beside the API history.
_UI_ONLY: Final = frozenset(
    {
        "api_req_failed",
        "api_req_retried",
        "error_retry",
        "error",
        "mistake_limit_reached",
        "diff_error",
        "deleted_api_reqs",
        "auto_approval_max_req_reached",
        "condense",
        "command_permission_denied",
        "clineignore_error",
        "shell_integration_warning",
        "shell_integration_warning_with_suggestion",
        "subagent_usage",
    }
)


class _ModelInfo(msgspec.Struct, rename="camel"):
    model_id: str | None = None
    provider_id: str | None = None


class _Tokens(msgspec.Struct):
    prompt: int = 0
    completion: int = 0
    cached: int = 0


class _Metrics(msgspec.Struct):
    tokens: _Tokens | None = None


class _ApiMessage(msgspec.Struct, rename="camel"):
    role: str | None = None
    content: Raw = NO_RAW
    model_info: _ModelInfo | None = None
    metrics: _Metrics | None = None
    ts: int | None = None


class _UiMessage(msgspec.Struct, rename="camel"):
    ts: int | float | None = None
    type: str | None = None
    say: str | None = None
    ask: str | None = None
    text: str | None = None
    partial: bool | None = None
    conversation_history_index: int | None = None
    model_info: _ModelInfo | None = None
    images: Raw = NO_RAW


class _Request(msgspec.Struct, rename="camel"):
    request: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    cache_writes: int | None = None
    cache_reads: int | None = None
    cost: float | None = None


class _Environment(msgspec.Struct):
    cline_version: str | None = None


class _Metadata(msgspec.Struct):
    environment_history: list[_Environment] | None = None


_decode_list = msgspec.json.Decoder(list[Raw]).decode
_decode_api = msgspec.json.Decoder(_ApiMessage).decode
_decode_ui = msgspec.json.Decoder(_UiMessage).decode
_decode_blocks = msgspec.json.Decoder(str | list[Raw]).decode
_decode_block = msgspec.json.Decoder(Block).decode
_decode_request = msgspec.json.Decoder(_Request).decode
_decode_metadata = msgspec.json.Decoder(_Metadata).decode
_decode_fields = msgspec.json.Decoder(dict[str, Raw]).decode
_decode_str = msgspec.json.Decoder(str).decode
_DECODE_ERRORS: Final = (msgspec.DecodeError, msgspec.ValidationError)

_UI_HEAD: Final = re.compile(rb'^\s*\[\s*\{\s*"(?:ts|type|say|ask)"\s*:')
_UI_TYPE: Final = re.compile(rb'"type"\s*:\s*"(?:say|ask)"')
_UI_TS: Final = re.compile(rb'"ts"\s*:\s*\d')
_API_HEAD: Final = re.compile(
    rb'^\s*\[\s*\{\s*"role"\s*:\s*"user"\s*,\s*"content"\s*:\s*(?:"|\[\s*\{\s*"type"\s*:\s*"text"\s*,'
    rb'\s*"text"\s*:\s*"(?:<task>|\\n<task>|<environment_details>))'
)
_METADATA_HEAD: Final = re.compile(
    rb'^\s*\{\s*"(?:files_in_context|model_usage|environment_history)"'
)


class ClineAdapter(BaseDocumentAdapter):
    """Parses a Cline / Roo Code / Kilo Code task folder: one session."""

    name: ClassVar[str] = HARNESS
    last_checked: ClassVar[str] = "3.51.0"
    containers: ClassVar[frozenset[str]] = frozenset({"folder", "json"})
    zip_member: ClassVar[str] = ""

    @classmethod
    def sniff(cls, head: bytes) -> Confidence:
        from agentminutes.harness.cline.sessions import HEAD

        if HEAD.match(head) and b'"sessionId"' in head and b'"origin"' in head:
            return Confidence.CERTAIN  # a 3.x CLI session document
        first = head[: head.find(b"}") + 1]  # the first UI message (its own keys come first)
        if _UI_HEAD.match(head) and _UI_TYPE.search(first) and _UI_TS.search(first):
            return Confidence.CERTAIN
        if _METADATA_HEAD.match(head):
            return Confidence.CERTAIN
        if _API_HEAD.match(head):
            return Confidence.CERTAIN
        return Confidence.NO_MATCH

    @classmethod
    def sniff_folder(cls, names: frozenset[str]) -> Confidence:
        return Confidence.CERTAIN if API in names or UI in names else Confidence.NO_MATCH

    @classmethod
    def folder_transcript(cls, folder: str, names: frozenset[str]) -> str | None:
        if cls.sniff_folder(names) < Confidence.CERTAIN:
            return None
        return os.path.join(folder, UI if UI in names else API)

    @classmethod
    def folder_of(cls, path: str, head: bytes) -> tuple[str, str] | None:
        if os.path.basename(path) in MEMBERS:
            return os.path.dirname(path), ""
        return None

    # -- the protocol -----------------------------------------------------------------

    def _task_id(self, doc: Document) -> str:
        path = document_path(doc)
        return os.path.basename(os.path.normpath(path))

    def _session_document(self, doc: Document) -> bytes | None:
        """The payload of a 3.x CLI session document (``*.messages.json``), else ``None``."""
        if getattr(doc, "container", "") != "json":
            return None
        from agentminutes.harness.cline.sessions import HEAD

        payload = doc.payload()
        return payload if HEAD.match(payload[:4096]) else None

    def conversations(self, doc: Document) -> list[ConversationInfo]:
        payload = self._session_document(doc)
        if payload is not None:
            from agentminutes.harness.cline.sessions import conversation

            return [conversation(payload, self, self._task_id(doc))]
        task = self._task_id(doc)
        ui = self._list(doc, UI)
        api = self._list(doc, API)
        first = last = None
        for raw in (ui[:1] + ui[-1:]) if ui else []:
            try:
                ts = _decode_ui(raw).ts
            except _DECODE_ERRORS:
                continue
            first = ts if first is None else first
            last = ts
        title = ""
        for raw in ui[:3]:
            try:
                m = _decode_ui(raw)
            except _DECODE_ERRORS:
                continue
            if m.say == "text" and m.text:
                title = listed_title(m.text)
                break
        return [
            ConversationInfo(
                id=task,
                title=title,
                created=format_ms(first) or format_ms(_int(task)),
                updated=format_ms(last),
                messages=len(api) if api else sum(1 for _ in ui),
            )
        ]

    def sessions(self, doc: Document, only: str | None = None) -> Iterator[DocumentSession]:
        payload = self._session_document(doc)
        if payload is not None:
            from agentminutes.harness.cline import sessions as v3

            info = v3.conversation(payload, self, self._task_id(doc))
            if only is not None and only != info.id:
                return
            skipped = self.begin(info.id)
            events = v3.events(payload, self, info.id, getattr(doc, "path", None))
            yield DocumentSession(conversation=info, events=events, skipped=skipped)
            return
        task = self._task_id(doc)
        if only is not None and only != task:
            return
        skipped = self.begin(task)
        api = self._list(doc, API)
        ui = self._list(doc, UI)
        meta_raw = doc.read(METADATA)
        if not api and not ui:
            have = f" (only {METADATA})" if meta_raw is not None else ""
            raise self.error(f"no {API} or {UI} in the task folder{have}", 0)
        builder = _Builder(self, task)
        events = builder.build(api, ui, meta_raw)
        info = self.conversations(doc)[0]
        yield DocumentSession(conversation=info, events=events, skipped=skipped)

    def tail(self, doc: Document) -> FolderTail:
        """Follow the task folder *doc* (see :class:`FolderTail`)."""
        return FolderTail(self, doc, document_path(doc))

    def _list(self, doc: Document, member: str) -> list[Raw]:
        data = doc.read(member)
        if data is None or not data.strip():
            return []
        try:
            return _decode_list(data)
        except _DECODE_ERRORS as exc:
            raise self.error(f"{member}: not a JSON array: {exc}", 0) from None


def _int(text: str) -> int | None:
    return int(text) if text.isdigit() else None


class _Response:
    """A model response being assembled from UI messages (the ``ui_messages.json``-only mode)."""

    def __init__(self, message_id: str, ts: str, usage: TokenUsage | None, first: int) -> None:
        self.message_id = message_id
        self.ts = ts
        self.usage = usage
        self.first = first
        self.text: list[ContentBlock] = []
        #: The last UI message handled while this response was open (its provenance's end).
        self.last = first
        self.model = ""


class _Builder:
    def __init__(self, adapter: ClineAdapter, task: str) -> None:
        self.adapter = adapter
        self.task = task
        self.events: list[Event] = []
        self.cwd = ""
        self.pending: deque[tuple[str, str]] = deque()
        self.calls = 0

    # -- helpers ----------------------------------------------------------------------

    def _prov(self, raw: Raw, n: int, end: int = 0) -> Provenance:
        return self.adapter.record_prov(raw, n, end)

    def _cwd_from(self, text: str) -> None:
        if not self.cwd:
            m = _CWD.search(text)
            if m:
                self.cwd = m.group(1)

    def _call(
        self, name: str, call_id: str, raw_input: Raw, mid: str, ts: str, prov: Provenance
    ) -> None:
        self.pending.append((call_id, name))
        kind = TOOL_KINDS.get(name, ToolKind.OTHER)
        call = ToolCall(tool_call_id=call_id, name=name, kind=kind, input=raw_input)
        self.events.append(Stamp(ts, prov, id=call_id, message_id=mid).tool_call(call))

    def _result(
        self,
        call_id: str,
        name: str,
        content: list[ContentBlock],
        failed: bool,
        ts: str,
        prov: Provenance,
    ) -> None:
        result = ToolResult(
            tool_call_id=call_id, tool_name=name, is_error=failed, content=content or None
        )
        self.events.append(Stamp(ts, prov, id=call_id).tool_result(result))

    def _take_call(self, name: str) -> tuple[str, str]:
        """The oldest unanswered call (of *name*, if one is waiting), removed from the queue."""
        for i, (cid, cname) in enumerate(self.pending):
            if cname == name:
                del self.pending[i]
                return cid, cname
        if self.pending:
            return self.pending.popleft()
        self.calls += 1
        return f"{self.task}:result:{self.calls}", name

    # -- the whole folder ---------------------------------------------------------------

    def build(self, api: list[Raw], ui: list[Raw], meta_raw: bytes | None) -> list[Event]:
        version = self.adapter.options.harness_version
        if meta_raw is not None:
            try:
                env = _decode_metadata(meta_raw).environment_history or []
                version = next((e.cline_version for e in reversed(env) if e.cline_version), version)
            except _DECODE_ERRORS:
                pass
        self.adapter.version = version
        uis: list[_UiMessage | None] = []
        for raw in ui:
            try:
                uis.append(_decode_ui(raw))
            except _DECODE_ERRORS:
                uis.append(None)
        first_ts = next((format_ms(m.ts) for m in uis if m is not None and m.ts), "") or format_ms(
            _int(self.task)
        )
        meta = Meta(harness=HARNESS, harness_version=version, session_id=self.task)
        self.events.append(
            Stamp(first_ts, Provenance(line=1, end_line=1), id=self.task).session_meta(meta)
        )
        missing = [
            name for name, there in ((API, api), (UI, ui), (METADATA, meta_raw)) if not there
        ]
        if missing:
            # Say what the folder lacks: without the API history, the prompts as sent
            # and most tool outputs are not there; without the UI, times and costs.
            lacks = SystemEvent(
                subtype="task_folder/missing",
                level="warning",
                text="missing: " + ", ".join(missing),
            )
            self.events.append(Stamp(first_ts, Provenance(line=1, end_line=1)).system(lacks))
        if api:
            self._api(api, ui, uis)
        else:
            self._ui(ui, uis, base=0)
        n_meta = len(api) + len(ui) + 1
        if meta_raw is not None:
            self.adapter.skip("task_metadata", n_meta)
        meta.cwd = self.cwd
        return self.events

    # -- with the API history -------------------------------------------------------------

    def _api(self, api: list[Raw], ui: list[Raw], uis: list[_UiMessage | None]) -> None:
        requests: list[tuple[int, _UiMessage, _Request | None]] = []
        for m in uis:
            if m is not None and m.say == "api_req_started":
                try:
                    req: _Request | None = _decode_request((m.text or "{}").encode())
                except _DECODE_ERRORS:
                    req = None
                requests.append((m.conversation_history_index or 0, m, req))
        # A request is recorded with the index of the history's last message before
        # the prompt it sends, so its reply lands two entries later.
        by_index = {h + 2: (m, r) for h, m, r in requests}
        replies = 0
        ts = self.events[0].timestamp  # the task's start, until the first request
        for i, raw in enumerate(api):
            n = i + 1
            try:
                msg = _decode_api(raw)
            except _DECODE_ERRORS as exc:
                self.events.append(
                    self.adapter.unknown_or_fail("", bytes(raw), n, f"malformed API message: {exc}")
                )
                continue
            if msg.role == "user":
                self._api_user(msg, raw, n, ts)
            elif msg.role == "assistant":
                found = by_index.get(i)
                if found is None and replies < len(requests):
                    found = requests[replies][1:]
                replies += 1
                if found is not None and found[0].ts:
                    ts = format_ms(found[0].ts)
                self._api_assistant(msg, raw, n, ts, found[1] if found else None)
            else:
                role = msg.role or ""
                self.events.append(
                    self.adapter.unknown_or_fail(
                        role, bytes(raw), n, f'unrecognized API message role "{role}"'
                    )
                )
        base = len(api)
        for j, m in enumerate(uis):
            n = base + j + 1
            if m is None:
                self.events.append(
                    self.adapter.unknown_or_fail("", bytes(ui[j]), n, "malformed UI message")
                )
                continue
            kind = m.say if m.type == "say" else m.ask
            if kind in _UI_ONLY:
                self.events.append(self._ui_system(m, ui[j], n))
            else:
                self.adapter.skip(f"ui/{m.type}/{kind}", n)

    def _blocks(self, msg: _ApiMessage, raw: Raw, n: int) -> list[tuple[Block, Raw]]:
        if not msg.content:
            return []
        try:
            value = _decode_blocks(msg.content)
        except _DECODE_ERRORS as exc:
            raise self.adapter.error(f"malformed message content: {exc}", n) from None
        if isinstance(value, str):
            return [(Block(type="text", text=value), msg.content)]
        out = []
        for b in value:
            try:
                out.append((_decode_block(b), b))
            except _DECODE_ERRORS as exc:
                raise self.adapter.error(f"malformed content block: {exc}", n) from None
        return out

    def _api_user(self, msg: _ApiMessage, raw: Raw, n: int, ts: str) -> None:
        before = len(self.events)
        self._api_user_blocks(msg, raw, n, ts)
        if len(self.events) == before:
            self.adapter.skip("api/user/empty", n)

    def _api_user_blocks(self, msg: _ApiMessage, raw: Raw, n: int, ts: str) -> None:
        prov = self._prov(raw, n)
        human: list[ContentBlock] = []
        injected: list[ContentBlock] = []
        #: The tool result being read: older releases sent its header and its
        #: content as separate text blocks.
        result: list[ContentBlock] | None = None
        for block, braw in self._blocks(msg, raw, n):
            btype = block.type or ""
            if btype == "text":
                text = block.text or ""
                self._cwd_from(text)
                head = _RESULT_HEAD.match(text)
                lead = text.lstrip()
                if head:
                    name = head.group("name") or head.group("refused") or ""
                    cid, cname = self._take_call(name)
                    refused = head.group("refused") is not None
                    result = [ContentBlock(kind="text", text=text)]
                    self._result(cid, cname, result, refused, ts, prov)
                elif lead.startswith(_HUMAN_TAGS):
                    result = None
                    human.append(ContentBlock(kind="text", text=text))
                elif result is not None and not lead.startswith("<environment_details>"):
                    result.append(ContentBlock(kind="text", text=text))
                else:
                    result = None
                    injected.append(ContentBlock(kind="text", text=text))
            elif btype == "tool_result":
                cid = block.tool_use_id or ""
                name = ""
                for i, (pid, pname) in enumerate(self.pending):
                    if pid == cid:
                        name = pname
                        del self.pending[i]
                        break
                self._result(
                    cid, name, _result_content(block.content), bool(block.is_error), ts, prov
                )
            elif btype == "image":
                (result if result is not None else human).append(
                    ContentBlock(kind="image", raw=braw)
                )
            else:
                injected.append(ContentBlock(kind="other", raw=braw))
        for origin, content in ((Origin.HUMAN, human), (Origin.HARNESS, injected)):
            if content:
                message = UserMessage(origin=origin, content=content)
                self.events.append(Stamp(ts, prov).user_message(message))

    def _api_assistant(
        self, msg: _ApiMessage, raw: Raw, n: int, ts: str, req: _Request | None
    ) -> None:
        prov = self._prov(raw, n)
        mid = f"{self.task}:{n}"
        text: list[ContentBlock] = []
        xml_calls = 0
        for block, braw in self._blocks(msg, raw, n):
            btype = block.type or ""
            if btype == "text":
                body = block.text or ""
                for call in _XML_CALL.finditer(body):
                    xml_calls += 1
                    params = {
                        p.group(1): p.group(2).strip() for p in _XML_PARAM.finditer(call.group(2))
                    }
                    self._call(
                        call.group(1),
                        f"{mid}:{xml_calls}",
                        Raw(msgspec.json.encode(params)),
                        mid,
                        ts,
                        prov,
                    )
                if body:
                    text.append(ContentBlock(kind="text", text=body))
            elif btype in ("thinking", "redacted_thinking"):
                thought = Thinking(text=block.thinking or "", signature=block.signature or "")
                self.events.append(Stamp(ts, prov, message_id=mid).thinking(thought))
            elif btype == "tool_use":
                self._call(
                    block.name or "",
                    block.id or f"{mid}:tool",
                    block.input or NO_RAW,
                    mid,
                    ts,
                    prov,
                )
            else:
                text.append(ContentBlock(kind="other", raw=braw))
        usage = _request_usage(req)
        if usage is None and msg.metrics is not None and msg.metrics.tokens is not None:
            t = msg.metrics.tokens
            usage = TokenUsage(
                input_tokens=t.prompt, output_tokens=t.completion, cache_read_input_tokens=t.cached
            )
        model = msg.model_info.model_id if msg.model_info is not None else ""
        reply = AssistantMessage(model=model or "", content=text or None, usage=usage)
        self.events.append(Stamp(ts, prov, id=mid, message_id=mid).assistant_message(reply))

    # -- the UI messages alone --------------------------------------------------------------

    def _ui_system(self, m: _UiMessage, raw: Raw, n: int) -> Event:
        kind = (m.say if m.type == "say" else m.ask) or ""
        level = "error" if "fail" in kind or "error" in kind else ""
        said = SystemEvent(subtype=f"ui/{kind}", level=level, text=m.text or "", details=raw)
        return Stamp(format_ms(m.ts), self._prov(raw, n)).system(said)

    def _ui(self, ui: list[Raw], uis: list[_UiMessage | None], base: int) -> None:
        open_: _Response | None = None
        task_seen = False
        last_command: tuple[str, str] | None = None
        for j, m in enumerate(uis):
            n = base + j + 1
            raw = ui[j]
            if m is None:
                self.events.append(
                    self.adapter.unknown_or_fail("", bytes(raw), n, "malformed UI message")
                )
                continue
            if m.type not in ("say", "ask"):
                self.events.append(
                    self.adapter.unknown_or_fail(
                        m.type or "", bytes(raw), n, f'unrecognized UI message type "{m.type}"'
                    )
                )
                continue
            kind = (m.say if m.type == "say" else m.ask) or ""
            ts = format_ms(m.ts)
            prov = self._prov(raw, n)
            text = m.text or ""
            mid = open_.message_id if open_ is not None else ""
            if kind == "api_req_started":
                self._close(open_)
                open_ = None
                try:
                    req: _Request | None = _decode_request(text.encode())
                except _DECODE_ERRORS:
                    req = None
                if req is not None and req.request:
                    self._cwd_from(req.request)
                open_ = _Response(f"{self.task}:{n}", ts, _request_usage(req), n)
                if m.model_info is not None:
                    open_.model = m.model_info.model_id or ""
            elif kind in ("text", "user_feedback") and (
                kind == "user_feedback" or not task_seen or open_ is None
            ):
                task_seen = True
                self._close(open_)
                open_ = None
                content = [ContentBlock(kind="text", text=text)] if text else []
                if m.images:
                    content.append(ContentBlock(kind="other", raw=m.images))
                message = UserMessage(origin=Origin.HUMAN, content=content or None)
                self.events.append(Stamp(ts, prov).user_message(message))
            elif kind in (
                "text",
                "completion_result",
                "followup",
                "plan_mode_respond",
                "act_mode_respond",
            ) and (m.type == "say" or text):
                if open_ is None:
                    open_ = _Response(f"{self.task}:{n}", ts, None, n)
                if text:
                    open_.text.append(ContentBlock(kind="text", text=text))
                if m.model_info is not None and m.model_info.model_id:
                    open_.model = m.model_info.model_id
            elif kind == "reasoning":
                self.events.append(Stamp(ts, prov, message_id=mid).thinking(Thinking(text=text)))
            elif kind in ("tool", "command", "use_mcp_server"):
                name, payload = _ui_tool(kind, text)
                cid = f"{self.task}:{n}"
                self._call(name, cid, payload, mid, ts, prov)
                if kind == "command":
                    last_command = (cid, name)
            elif kind in ("command_output", "mcp_server_response"):
                if kind == "command_output" and last_command is not None:
                    cid, name = last_command
                    if cid in {c for c, _ in self.pending}:
                        self.pending = deque(p for p in self.pending if p[0] != cid)
                else:
                    cid, name = self._take_call(
                        "use_mcp_tool" if kind == "mcp_server_response" else ""
                    )
                self._result(
                    cid,
                    name,
                    [ContentBlock(kind="text", text=text)] if text else [],
                    False,
                    ts,
                    prov,
                )
            else:
                self.events.append(self._ui_system(m, raw, n))
            if open_ is not None:
                open_.last = n
        self._close(open_)

    def _close(self, open_: _Response | None) -> None:
        if open_ is None:
            return
        mid = open_.message_id
        stamp = Stamp(
            open_.ts, Provenance(line=open_.first, end_line=open_.last), id=mid, message_id=mid
        )
        reply = AssistantMessage(model=open_.model, content=open_.text or None, usage=open_.usage)
        self.events.append(stamp.assistant_message(reply))


def _request_usage(req: _Request | None) -> TokenUsage | None:
    if req is None or (req.tokens_in is None and req.tokens_out is None):
        return None
    return TokenUsage(
        input_tokens=req.tokens_in or 0,
        output_tokens=req.tokens_out or 0,
        cache_read_input_tokens=req.cache_reads or 0,
        cache_creation_input_tokens=req.cache_writes or 0,
        cost=req.cost,
    )


def _ui_tool(kind: str, text: str) -> tuple[str, Raw]:
    """A UI tool message's tool name and its input (the message's JSON, or the command)."""
    if kind == "command":
        return "execute_command", Raw(msgspec.json.encode({"command": text}))
    try:
        fields = _decode_fields(text.encode())
    except _DECODE_ERRORS:
        return kind, Raw(msgspec.json.encode({"text": text}))
    name = ""
    for key in ("tool", "toolName"):
        value = fields.get(key)
        if value is not None:
            try:
                name = _decode_str(value)
            except _DECODE_ERRORS:
                name = ""
            if name:
                break
    if kind == "use_mcp_server":
        name = "use_mcp_tool" if not name or fields.get("type") is None else name
    return name or kind, Raw(text.encode())


def _result_content(raw: Raw) -> list[ContentBlock]:
    if not raw:
        return []
    try:
        value = _decode_blocks(raw)
    except _DECODE_ERRORS:
        return [ContentBlock(kind="other", raw=raw)]
    if isinstance(value, str):
        return [ContentBlock(kind="text", text=value)] if value else []
    return [item_block(b, _decode_block) for b in value]


# -- following a task folder -----------------------------------------------------------------


class FolderTail:
    """Follows a task folder whose documents Cline rewrites whole on every change.

    Each :meth:`poll` re-reads the folder when one of its documents changed
    (size or modification time), converts it as ``convert`` does, and returns
    the events not written before (known by kind, ids and rank, so a record
    that moves is not written twice). The events of the last record wait for a
    later save to show a record after it (Cline rewrites its last message as
    it streams), or for the stop (:meth:`flush`).
    """

    def __init__(self, adapter: ClineAdapter, doc: Document, folder: str) -> None:
        self.adapter = adapter
        self.doc = doc
        self.folder = folder
        self.shown: set[str] = set()
        self.signature: tuple[tuple[int, int], ...] | None = None
        self.task = adapter._task_id(doc)

    def watched(self) -> list[str]:
        """The files whose changes mean a new save."""
        return [os.path.join(self.folder, m) for m in (API, UI, METADATA)]

    def _stat(self) -> tuple[tuple[int, int], ...]:
        out = []
        for path in self.watched():
            try:
                st = os.stat(path)
                out.append((st.st_size, st.st_mtime_ns))
            except OSError:
                out.append((-1, 0))
        return tuple(out)

    def poll(self) -> list[tuple[str, list[Event]]]:
        """The events a new save settled (none while nothing changed)."""
        signature = self._stat()
        if signature == self.signature:
            return []
        self.signature = signature
        return [(self.task, self._news(final=False))]

    def flush(self) -> list[tuple[str, list[Event]]]:
        """At a stop: every event not written yet."""
        return [(self.task, self._news(final=True))]

    def _news(self, *, final: bool) -> list[Event]:
        from agentminutes.errors import AgentminutesError

        try:
            session = next(self.adapter.sessions(self.doc), None)
        except AgentminutesError:
            if final:
                raise
            return []  # caught mid-rewrite: the next save completes it
        if session is None:
            return []
        events = session.events
        if not final:
            lines = [e.provenance.line for e in events if e.provenance is not None]
            last = max(lines, default=0)
            events = [e for e in events if e.provenance is None or e.provenance.line != last]
        return unseen(self.shown, events)
