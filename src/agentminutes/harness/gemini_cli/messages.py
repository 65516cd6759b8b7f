"""Gemini CLI messages as events: the held model message, user turns, notices, content parts."""

from __future__ import annotations

from msgspec import Raw

from agentminutes.harness._gemini_wire import (
    Part,
    decode_function_call,
    decode_function_response,
    decode_part,
    decode_response,
    part_blocks,
)
from agentminutes.harness.base import tool_call
from agentminutes.harness.gemini_cli.common import GeminiCommon, _Held, _Src
from agentminutes.harness.gemini_cli.records import (
    _DECODE_ERRORS,
    _decode_fields,
    _decode_list,
    _decode_number,
    _decode_parts,
    _decode_record,
    _decode_str,
    _decode_thoughts,
    _decode_tool_calls,
    _Record,
    _ToolCallRecord,
)
from agentminutes.harness.gemini_cli.vocabulary import (
    _USAGE_KEYS,
    FINAL_STATUSES,
    MODEL_TYPES,
    NOTICE_TYPES,
    TOOL_KINDS,
)
from agentminutes.schema import (
    NO_RAW,
    AssistantMessage,
    ContentBlock,
    Event,
    EventKind,
    Origin,
    Provenance,
    SystemEvent,
    Thinking,
    TokenUsage,
    UserMessage,
)
from agentminutes.timestamps import valid_timestamp


class MessagesMixin(GeminiCommon):
    """Turns message records (of a JSONL file or a document alike) into events."""

    # -- the session header, and the messages it carries -------------------

    def _header(self, rec: _Record, src: _Src, out: list[Event], details: Raw) -> None:
        self._ensure_meta(src, out, rec)
        out.append(
            self._said(src, valid_timestamp(rec.start_time), rec.session_id or "").system(
                SystemEvent(subtype="session", details=details)
            )
        )
        if rec.messages:
            self._messages(rec.messages, src, out)

    def _messages(self, messages: Raw, src: _Src, out: list[Event]) -> None:
        try:
            items = _decode_list(messages) or []
            recs = [_decode_record(item) for item in items]
        except _DECODE_ERRORS as exc:
            raise self._reject("", src, f"malformed messages: {exc}") from None
        for r, item in zip(recs, items, strict=True):
            self._message(r, _Src(src.first, src.last, bytes(item)), out)

    # -- messages ----------------------------------------------------------

    def _message(
        self, rec: _Record, src: _Src, out: list[Event], *, replayed: bool = False
    ) -> None:
        """One message record; *replayed* when it comes out of a history replacement."""
        message_id = rec.id or ""
        kind = rec.type or ""
        held = self.held
        if held is not None and held.message_id == message_id and message_id:
            self._update_held(held, rec, src, out)
            return
        self._release(out)
        self._ensure_meta(src, out)
        if message_id and message_id not in self.current:
            self.current[message_id] = None
        if message_id and message_id in self.seen:
            # An earlier message written again: only what it newly shows is an event.
            before = len(out)
            if kind in MODEL_TYPES:
                self._model_parts(rec, src, out, message_id, thinking_from=None)
            elif kind == "user":
                self._user(rec, src, out, results_only=True, replayed=True)
            if len(out) == before and not replayed:
                self.skip(f"{kind}/rewrite", src.first)
            return
        if message_id:
            self.seen.add(message_id)
        if kind in MODEL_TYPES:
            held = _Held(message_id, src.raw, src.first)
            held.last = src.last
            if self.options.keep_raw:
                held.raw.append(src.raw)
            held.thinking = self._model_parts(rec, src, out, message_id, thinking_from=0)
            self.held = held
        elif kind == "user":
            self._user(rec, src, out, replayed=replayed)
        elif kind in NOTICE_TYPES:
            out.append(self._notice(rec, src))
        else:
            reason = f'unrecognized message type "{kind}"' if kind else "message has no type"
            raise self._reject(kind, src, reason)

    def _update_held(self, held: _Held, rec: _Record, src: _Src, out: list[Event]) -> None:
        if (rec.type or "") not in MODEL_TYPES:
            raise self._reject(
                rec.type or "", src, f'message "{held.message_id}" changed its type to "{rec.type}"'
            )
        held.record = src.raw
        held.last = max(held.last, src.last)
        if self.options.keep_raw and src.raw not in held.raw:
            held.raw.append(src.raw)
        held.thinking = self._model_parts(rec, src, out, held.message_id, held.thinking)

    def _release(self, out: list[Event]) -> None:
        """Emit the held ``gemini`` message as it now stands."""
        held = self.held
        if held is None:
            return
        self.held = None
        src = _Src(held.first, held.last, held.record)
        raw = [Raw(r) for r in held.raw] if self.options.keep_raw else None
        out.append(self._assistant(_decode_record(held.record), src, held.message_id, raw))

    def _assistant(self, rec: _Record, src: _Src, message_id: str, raw: list[Raw] | None) -> Event:
        blocks, _, _ = self._parts(rec.content or rec.parts, src)
        return Event(
            kind=EventKind.ASSISTANT_MESSAGE,
            timestamp=valid_timestamp(rec.timestamp),
            id=message_id,
            message_id=message_id,
            provenance=Provenance(line=src.first, end_line=src.last, raw=raw),
            assistant_message=AssistantMessage(
                model=rec.model or "", content=blocks or None, usage=self._usage(rec.tokens, src)
            ),
        )

    def _model_parts(
        self, rec: _Record, src: _Src, out: list[Event], message_id: str, thinking_from: int | None
    ) -> int:
        """Thinking and tool events of one version of a model message; returns thoughts seen.

        *thinking_from* is how many thoughts were already emitted (``None``: the
        message was emitted before, and its content parts are a re-rendering of
        it, so only ``toolCalls`` entries not seen before count).
        """
        ts = valid_timestamp(rec.timestamp)
        try:
            thoughts = _decode_thoughts(rec.thoughts) if rec.thoughts else None
            calls = _decode_tool_calls(rec.tool_calls) if rec.tool_calls else None
        except _DECODE_ERRORS as exc:
            raise self._reject(rec.type or "", src, f"malformed message: {exc}") from None
        _, part_thoughts, part_calls = self._parts(rec.content or rec.parts, src)
        items: list[tuple[str, str, str]] = []
        if thoughts:
            for t in thoughts:
                text = "\n\n".join(x for x in (t.subject, t.description) if x)
                items.append((text, "", valid_timestamp(t.timestamp) or ts))
        else:
            items = [(text, sig, ts) for text, sig in part_thoughts]
        if thinking_from is not None:
            for text, sig, when in items[thinking_from:]:
                out.append(
                    self._said(src, when, message_id, message_id=message_id).thinking(
                        Thinking(text=text, signature=sig)
                    )
                )
        recorded = {c.id for c in calls or () if c.id}
        for call in calls or ():
            self._tool_call(call.id or "", call.name or "", call.args, ts, message_id, src, out)
        for call_id, name, args in part_calls if thinking_from is not None else ():
            if call_id not in recorded:
                self._tool_call(call_id, name, args, ts, message_id, src, out)
        for call in calls or ():
            if call.result or call.status in FINAL_STATUSES:
                self._tool_record_result(call, ts, message_id, src, out)
        return max(len(items), thinking_from or 0)

    def _tool_call(
        self,
        call_id: str,
        name: str,
        args: Raw,
        ts: str,
        message_id: str,
        src: _Src,
        out: list[Event],
    ) -> None:
        if call_id:
            if call_id in self.calls_sent:
                return
            self.calls_sent.add(call_id)
            self.name_call(call_id, name)
        out.append(
            self._said(src, ts, message_id, message_id=message_id).tool_call(
                tool_call(call_id, name, args, TOOL_KINDS)
            )
        )

    def _tool_record_result(
        self, call: _ToolCallRecord, ts: str, message_id: str, src: _Src, out: list[Event]
    ) -> None:
        call_id = call.id or ""
        if call_id and call_id in self.results_sent:
            return
        blocks: list[ContentBlock] = []
        failed = call.status in ("error", "cancelled")
        if call.result:
            try:
                value = _decode_parts(call.result)
            except _DECODE_ERRORS as exc:
                raise self._reject("gemini", src, f"malformed tool result: {exc}") from None
            if isinstance(value, str):
                blocks.append(ContentBlock(kind="text", text=value))
            else:
                for raw in _part_list(value, call.result):
                    part = self._part(raw, src)
                    if part.function_response:
                        got, error = self._response_blocks(part.function_response, src)
                        blocks.extend(got)
                        failed = failed or (error and call.status is None)
                    else:
                        blocks.extend(part_blocks(part, raw))
        if call_id:
            self.results_sent.add(call_id)
        display = call.result_display
        if display and bytes(display) in (b"null", b'""'):
            display = NO_RAW
        out.append(
            self._said(
                src, valid_timestamp(call.timestamp) or ts, message_id, message_id=message_id
            ).tool_result(
                self.tool_result(
                    call_id, blocks, is_error=failed, name=call.name or "", enrichment=display
                )
            )
        )

    def _user(
        self,
        rec: _Record,
        src: _Src,
        out: list[Event],
        *,
        results_only: bool = False,
        replayed: bool = False,
    ) -> None:
        """A user message; *replayed* when it comes from a history replacement.

        A message first seen in a history replacement was added by the harness
        (a compression summary, a tool-response turn), not typed by a person.
        """
        ts = valid_timestamp(rec.timestamp)
        message_id = rec.id or ""
        content = rec.content or rec.parts
        value = self._decode_content(content, rec.type or "user", src)
        blocks: list[ContentBlock] = []
        responses = results = 0
        if isinstance(value, str):
            blocks.append(ContentBlock(kind="text", text=value))
        else:
            for raw in _part_list(value, content):
                part = self._part(raw, src)
                if part.function_response:
                    responses += 1
                    results += self._response_result(
                        part.function_response, ts, message_id, src, out
                    )
                else:
                    blocks.extend(part_blocks(part, raw))
        if results_only:
            return
        if not blocks and responses:
            # Function responses sent back to the model, already recorded with their calls.
            if not results and not replayed:
                self.skip("user/functionResponse", src.first)
            return
        out.append(
            self._said(src, ts, message_id).user_message(
                UserMessage(
                    origin=Origin.HARNESS if responses or replayed else Origin.HUMAN,
                    content=blocks or None,
                )
            )
        )

    def _response_result(
        self, raw: Raw, ts: str, message_id: str, src: _Src, out: list[Event]
    ) -> int:
        """A function response as a tool result, unless one was emitted for its call (0)."""
        try:
            fr = decode_function_response(raw)
        except _DECODE_ERRORS as exc:
            raise self._reject("user", src, f"malformed function response: {exc}") from None
        call_id = fr.id or ""
        if call_id and call_id in self.results_sent:
            return 0
        if call_id:
            self.results_sent.add(call_id)
        blocks, error = self._response_blocks(raw, src)
        out.append(
            self._said(src, ts, message_id).tool_result(
                self.tool_result(call_id, blocks, is_error=error, name=fr.name or "")
            )
        )
        return 1

    def _response_blocks(self, raw: Raw, src: _Src) -> tuple[list[ContentBlock], bool]:
        """A function response's content, and whether it reports an error."""
        try:
            fr = decode_function_response(raw)
            resp = decode_response(fr.response) if fr.response else None
        except _DECODE_ERRORS as exc:
            raise self._reject("gemini", src, f"malformed function response: {exc}") from None
        if resp is None:
            return [], False
        blocks = []
        for value in (resp.output, resp.error):
            if not value:
                continue
            try:
                blocks.append(ContentBlock(kind="text", text=_decode_str(value)))
            except _DECODE_ERRORS:
                blocks.append(ContentBlock(kind="other", raw=value))
        if not blocks and fr.response and bytes(fr.response).strip() != b"{}":
            blocks.append(ContentBlock(kind="other", raw=fr.response))
        return blocks, bool(resp.error)

    def _notice(self, rec: _Record, src: _Src) -> Event:
        kind = rec.type or ""
        value = self._decode_content(rec.content, kind, src)
        if isinstance(value, str):
            text = value
        else:
            texts = []
            for raw in _part_list(value, rec.content):
                part = self._part(raw, src)
                if part.text:
                    texts.append(part.text)
            text = "\n".join(texts)
        said = self._said(src, valid_timestamp(rec.timestamp), rec.id or "")
        return said.system(SystemEvent(subtype=kind, level=kind, text=text, details=Raw(src.raw)))

    # -- parts -------------------------------------------------------------

    def _decode_content(self, content: Raw, kind: str, src: _Src) -> str | list[Raw] | Part | None:
        if not content:
            return None
        try:
            value: str | list[Raw] | Part | None = _decode_parts(content)
        except _DECODE_ERRORS as exc:
            raise self._reject(kind, src, f"malformed {kind} content: {exc}") from None
        return value

    def _part(self, raw: Raw, src: _Src) -> Part:
        try:
            return decode_part(raw)
        except _DECODE_ERRORS as exc:
            raise self._reject("", src, f"malformed content part: {exc}") from None

    def _parts(
        self, content: Raw, src: _Src
    ) -> tuple[list[ContentBlock], list[tuple[str, str]], list[tuple[str, str, Raw]]]:
        """A model message's content: text blocks, thought parts, function-call parts."""
        value = self._decode_content(content, "gemini", src)
        if value is None:
            return [], [], []
        if isinstance(value, str):
            return ([ContentBlock(kind="text", text=value)] if value else []), [], []
        blocks: list[ContentBlock] = []
        thoughts: list[tuple[str, str]] = []
        calls: list[tuple[str, str, Raw]] = []
        for raw in _part_list(value, content):
            part = self._part(raw, src)
            if part.thought:
                thoughts.append((part.text or "", part.thought_signature or ""))
            elif part.function_call:
                try:
                    fc = decode_function_call(part.function_call)
                except _DECODE_ERRORS as exc:
                    raise self._reject("gemini", src, f"malformed function call: {exc}") from None
                calls.append((fc.id or "", fc.name or "", fc.args))
            elif part.function_response:
                continue
            else:
                blocks.extend(part_blocks(part, raw))
        return blocks, thoughts, calls

    def _usage(self, raw: Raw, src: _Src) -> TokenUsage | None:
        if not raw:
            return None
        try:
            fields = _decode_fields(raw)
            if fields is None:
                return None
            counts = {k: int(_decode_number(fields[k]) or 0) for k in _USAGE_KEYS if k in fields}
        except _DECODE_ERRORS as exc:
            raise self._reject("gemini", src, f"malformed tokens: {exc}") from None
        for key in ("input", "output", "cached"):
            fields.pop(key, None)
        cached = counts.get("cached", 0)
        return TokenUsage(
            input_tokens=max(0, counts.get("input", 0) - cached) + counts.get("tool", 0),
            output_tokens=counts.get("output", 0) + counts.get("thoughts", 0),
            cache_read_input_tokens=cached,
            extra=fields or None,
        )


def _part_list(value: str | list[Raw] | Part | None, raw: Raw) -> list[Raw]:
    """Content parts as a list of raw parts (a single part object becomes a list of one)."""
    if value is None or isinstance(value, str):
        return []
    if isinstance(value, list):
        return value
    return [raw]
