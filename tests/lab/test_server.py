"""The lab's scripted model server over real sockets: each protocol, streamed and not.

A client here speaks to :class:`lab.server.LabServer` as a harness would (HTTP on
127.0.0.1), reassembles what it streams, and checks it against the ground truth the server
records: the text, thinking, tool calls and usage a harness would read are the ones billed.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest
from lab.scenario import parse_scenario
from lab.server import LabServer, ScriptedModel

SCENARIO = parse_scenario(
    {
        "name": "unit",
        "prompts": ["go"],
        "steps": [
            {"error": {"status": 503}},
            {
                "thinking": "Look first, then read two files.",
                "text": "Looking.",
                "tool_calls": [
                    {"kind": "shell", "command": "ls"},
                    {"kind": "read", "path": "missing.txt", "fails": True},
                ],
            },
            {"text": "All done: " + "x" * 100},
        ],
    }
)


def post(url: str, body: dict[str, Any]) -> tuple[int, bytes]:
    """POST JSON, return the status and the raw body (errors included)."""
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def sse_data(raw: bytes) -> list[Any]:
    """The ``data:`` payloads of a server-sent event stream, parsed (``[DONE]`` kept)."""
    out = []
    for line in raw.decode().splitlines():
        if line.startswith("data: "):
            payload = line[len("data: ") :]
            out.append(payload if payload == "[DONE]" else json.loads(payload))
    return out


def run_three(path: str, body: dict[str, Any]) -> tuple[ScriptedModel, list[tuple[int, bytes]]]:
    """Send ``body`` to ``path`` three times: the error, the tool step, the last answer."""
    model = ScriptedModel(SCENARIO)
    with LabServer(model) as server:
        answers = [post(server.url + path, body) for _ in range(3)]
    return model, answers


ANTHROPIC = {
    "model": "claude-lab",
    "max_tokens": 100,
    "tools": [{"name": "shell"}],
    "messages": [{"role": "user", "content": "go"}],
}


@pytest.mark.parametrize("stream", [False, True])
def test_anthropic_messages(stream: bool) -> None:
    model, answers = run_three("/v1/messages?beta=true", {**ANTHROPIC, "stream": stream})
    truth = model.ground_truth()
    assert answers[0][0] == 503
    assert json.loads(answers[0][1])["type"] == "error"
    assert [r["status"] for r in truth["requests"]] == [503, 200, 200]
    billed = truth["requests"][1]["billed"]
    if stream:
        events = sse_data(answers[1][1])
        kinds = [e["type"] for e in events]
        assert kinds[0] == "message_start"
        assert kinds[-1] == "message_stop"
        thinking = "".join(
            e["delta"].get("thinking", "") for e in events if e["type"] == "content_block_delta"
        )
        signature = [
            e["delta"]["signature"]
            for e in events
            if e.get("delta", {}).get("type") == "signature_delta"
        ]
        tools = [
            e["content_block"]
            for e in events
            if e["type"] == "content_block_start" and e["content_block"]["type"] == "tool_use"
        ]
        args = "".join(
            e["delta"].get("partial_json", "") for e in events if e["type"] == "content_block_delta"
        )
        usage = next(e for e in events if e["type"] == "message_delta")["usage"]
        assert thinking == "Look first, then read two files."
        assert len(signature) == 1
        assert signature[0]
        assert [t["name"] for t in tools] == ["shell", "read"]
        assert args == '{"command": "ls"}{"path": "missing.txt"}'
    else:
        message = json.loads(answers[1][1])
        assert [b["type"] for b in message["content"]] == [
            "thinking",
            "text",
            "tool_use",
            "tool_use",
        ]
        assert message["stop_reason"] == "tool_use"
        usage = message["usage"]
    assert (
        usage["input_tokens"]
        + usage["cache_read_input_tokens"]
        + usage["cache_creation_input_tokens"]
        == billed["input_tokens"]
    )
    assert usage["cache_creation_input_tokens"] == billed["cache_creation_input_tokens"] > 0
    assert usage["output_tokens"] == billed["output_tokens"]
    assert billed["reasoning_output_tokens"] is None
    calls = truth["tool_calls"]
    assert [(c["name"], c["fails"]) for c in calls] == [("shell", False), ("read", True)]
    assert truth["steps_used"] == 3
    # The second conversation request reads its prefix from the cache; the first does not.
    assert truth["requests"][1]["billed"]["cache_read_input_tokens"] == 0
    assert truth["requests"][2]["billed"]["cache_read_input_tokens"] > 0


def test_each_run_answers_with_ids_of_its_own() -> None:
    # Two recordings in one home are two sessions: a provider's ids never repeat, and a
    # reader that counts each message id once would fold two runs' requests into one.
    runs = [run_three("/v1/messages", ANTHROPIC) for _ in range(2)]
    ids = []
    for model, answers in runs:
        message = json.loads(answers[1][1])
        recorded = model.ground_truth()["requests"][1]
        assert message["id"] == recorded["message_id"]
        ids.append(
            (message["id"], [b["id"] for b in message["content"] if b["type"] == "tool_use"])
        )
    assert ids[0][0] != ids[1][0]
    assert not set(ids[0][1]) & set(ids[1][1])


def test_anthropic_tool_results_are_recorded_as_answers() -> None:
    model = ScriptedModel(SCENARIO)
    body = {
        **ANTHROPIC,
        "messages": [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "toolu_x", "name": "shell", "input": {}}],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_x",
                        "is_error": True,
                        "content": "no",
                    }
                ],
            },
        ],
    }
    with LabServer(model) as server:
        post(server.url + "/v1/messages", body)
    assert model.ground_truth()["requests"][0]["answered"] == [{"id": "toolu_x", "is_error": True}]


@pytest.mark.parametrize("stream", [False, True])
def test_openai_chat_completions(stream: bool) -> None:
    body = {
        "model": "qwen-lab",
        "stream": stream,
        "stream_options": {"include_usage": True},
        "tools": [{"type": "function", "function": {"name": "shell"}}],
        "messages": [{"role": "user", "content": "go"}],
    }
    model, answers = run_three("/v1/chat/completions", body)
    truth = model.ground_truth()
    assert answers[0][0] == 503
    billed = truth["requests"][1]["billed"]
    if stream:
        chunks = sse_data(answers[1][1])
        assert chunks[-1] == "[DONE]"
        deltas = [c["choices"][0]["delta"] for c in chunks[:-1] if c["choices"]]
        reasoning = "".join(d.get("reasoning_content", "") for d in deltas)
        calls: dict[int, dict[str, str]] = {}
        for d in deltas:
            for tc in d.get("tool_calls", []):
                slot = calls.setdefault(tc["index"], {"name": "", "arguments": ""})
                slot["name"] += tc.get("function", {}).get("name", "")
                slot["arguments"] += tc["function"].get("arguments", "")
        usage = chunks[-2]["usage"]
        assert chunks[-2]["choices"] == []
        assert reasoning == "Look first, then read two files."
        assert [(c["name"], json.loads(c["arguments"])) for c in calls.values()] == [
            ("shell", {"command": "ls"}),
            ("read", {"path": "missing.txt"}),
        ]
    else:
        answer = json.loads(answers[1][1])
        assert answer["choices"][0]["finish_reason"] == "tool_calls"
        usage = answer["usage"]
    assert usage["prompt_tokens"] == billed["input_tokens"]
    assert usage["prompt_tokens_details"]["cached_tokens"] == billed["cache_read_input_tokens"]
    assert usage["completion_tokens"] == billed["output_tokens"]
    assert (
        usage["completion_tokens_details"]["reasoning_tokens"]
        == billed["reasoning_output_tokens"]
        > 0
    )


def test_openai_chat_stream_without_usage_request_sends_none_and_says_so() -> None:
    body = {
        "model": "m",
        "stream": True,
        "tools": [{"type": "function", "function": {"name": "shell"}}],
        "messages": [],
    }
    model = ScriptedModel(
        parse_scenario({"name": "t", "prompts": ["x"], "steps": [{"text": "hi"}]})
    )
    with LabServer(model) as server:
        _, raw = post(server.url + "/chat/completions", body)
    assert not any(isinstance(c, dict) and "usage" in c for c in sse_data(raw))
    assert model.ground_truth()["requests"][0]["usage_sent"] is False


@pytest.mark.parametrize("stream", [False, True])
def test_openai_responses(stream: bool) -> None:
    body = {
        "model": "gpt-lab",
        "stream": stream,
        "tools": [{"type": "function", "name": "shell"}],
        "input": [],
    }
    model, answers = run_three("/v1/responses", body)
    truth = model.ground_truth()
    assert answers[0][0] == 503
    billed = truth["requests"][1]["billed"]
    if stream:
        events = sse_data(answers[1][1])
        assert events[0]["type"] == "response.created"
        assert events[-1]["type"] == "response.completed"
        assert [e["sequence_number"] for e in events] == list(range(1, len(events) + 1))
        items = [e["item"] for e in events if e["type"] == "response.output_item.done"]
        response = events[-1]["response"]
    else:
        response = json.loads(answers[1][1])
        items = response["output"]
    assert [i["type"] for i in items] == ["reasoning", "message", "function_call", "function_call"]
    assert [i["name"] for i in items[2:]] == ["shell", "read"]
    assert [i["call_id"] for i in items[2:]] == [c["id"] for c in truth["tool_calls"]]
    usage = response["usage"]
    assert usage["input_tokens"] == billed["input_tokens"]
    assert usage["input_tokens_details"]["cached_tokens"] == billed["cache_read_input_tokens"]
    assert usage["output_tokens"] == billed["output_tokens"]
    assert usage["output_tokens_details"]["reasoning_tokens"] == billed["reasoning_output_tokens"]


@pytest.mark.parametrize("stream", [False, True])
def test_gemini(stream: bool) -> None:
    op = "streamGenerateContent?alt=sse" if stream else "generateContent"
    body = {
        "contents": [{"role": "user", "parts": [{"text": "go"}]}],
        "tools": [{"functionDeclarations": [{"name": "shell"}]}],
    }
    model, answers = run_three(f"/v1beta/models/gemini-lab:{op}", body)
    truth = model.ground_truth()
    assert answers[0][0] == 503
    billed = truth["requests"][1]["billed"]
    pieces = sse_data(answers[1][1]) if stream else [json.loads(answers[1][1])]
    parts = [p for c in pieces for p in c["candidates"][0]["content"]["parts"]]
    thought = "".join(p["text"] for p in parts if p.get("thought"))
    calls = [p["functionCall"] for p in parts if "functionCall" in p]
    usage = pieces[-1]["usageMetadata"]
    assert thought == "Look first, then read two files."
    assert [c["name"] for c in calls] == ["shell", "read"]
    assert truth["requests"][1]["model"] == "gemini-lab"
    assert usage["promptTokenCount"] == billed["input_tokens"]
    assert usage["cachedContentTokenCount"] == billed["cache_read_input_tokens"]
    assert usage["candidatesTokenCount"] + usage["thoughtsTokenCount"] == billed["output_tokens"]
    assert usage["thoughtsTokenCount"] == billed["reasoning_output_tokens"]


def test_side_requests_take_no_step_and_json_side_requests_get_json() -> None:
    model = ScriptedModel(SCENARIO)
    with LabServer(model) as server:
        _, title = post(server.url + "/v1/messages", {"model": "haiku", "messages": []})
        _, verdict = post(
            server.url + "/v1beta/models/flash:generateContent",
            {"contents": [], "generationConfig": {"responseMimeType": "application/json"}},
        )
        status, _ = post(server.url + "/v1/messages", ANTHROPIC)
    truth = model.ground_truth()
    assert json.loads(title)["content"][0]["text"] == "Lab session"
    answer = json.loads(json.loads(verdict)["candidates"][0]["content"]["parts"][0]["text"])
    assert answer["next_speaker"] == "user"
    assert [r["side"] for r in truth["requests"]] == [True, True, False]
    assert status == 503  # the conversation's first request still got the first step
    assert truth["steps_used"] == 1
    assert truth["conversation_requests"] == 0


def test_requests_past_the_script_are_answered_and_flagged() -> None:
    model = ScriptedModel(
        parse_scenario({"name": "t", "prompts": ["x"], "steps": [{"text": "one"}]})
    )
    with LabServer(model) as server:
        post(server.url + "/v1/messages", ANTHROPIC)
        _, raw = post(server.url + "/v1/messages", ANTHROPIC)
        status, _ = post(server.url + "/v1/unknown", {})
    truth = model.ground_truth()
    assert "no more steps" in json.loads(raw)["content"][0]["text"]
    assert truth["requests"][1]["beyond_script"] is True
    assert status == 404
    assert truth["unhandled"] == [{"path": "/v1/unknown"}]
    # Totals add up the conversation's requests exactly.
    assert truth["billed"]["output_tokens"] == sum(
        r["billed"]["output_tokens"] for r in truth["requests"]
    )
