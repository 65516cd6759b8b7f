"""The redact stage on real transcripts: planted secrets all found, nothing else changed."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import msgspec
import pytest

import agentminutes
from agentminutes.errors import UsageError
from agentminutes.pipeline.batch import Batch, apply_stages
from agentminutes.schema import ContentBlock, Event, Raw, ToolCall, ToolResult
from agentminutes.stages import redact
from agentminutes.stages.detectors import DETECTORS, DetectorSet
from conftest import FIXTURES, transcripts
from planting import KINDS, USER_PATTERN, Plant, marker, plant

KEY = b"test-key"

#: A record of a type no adapter knows, per harness: --permissive keeps it as an unknown event.
UNKNOWN: dict[str, dict[str, Any]] = {
    "claude-code": {
        "type": "planted_record",
        "uuid": "p-1",
        "timestamp": "2025-01-01T00:00:00Z",
        "text": "{secrets}",
    },
    "codex": {
        "timestamp": "2025-09-19T02:00:00Z",
        "type": "planted_record",
        "payload": {"text": "{secrets}"},
    },
    "copilot": {
        "type": "planted.record",
        "id": "p-1",
        "timestamp": "2026-01-01T00:00:00Z",
        "data": {"text": "{secrets}"},
    },
}

#: Where events carry text, by event kind.
FIELDS = {
    "user_message": ("content",),
    "assistant_message": ("content",),
    "thinking": ("text",),
    "tool_call": ("input",),
    "tool_result": ("content", "enrichment"),
    "system": ("text", "details"),
    "unknown": ("raw",),
}
ALL_FIELDS = {f"{k}.{f}" for k, fs in FIELDS.items() for f in fs} | {"provenance.raw"}

#: Real transcripts to plant in, and the field kinds each carries text in.
PLANTED = {
    "claude-code/fasthooks-main.jsonl": ALL_FIELDS,
    "codex/nitta-dotfiles/rollout-2025-09-19T01-53-52-1d480e7c-6376-47af-8312-9a0cf1eef4a6.jsonl": ALL_FIELDS,
    "copilot/hawzx-ai/27d7ef99-f7c7-43eb-8599-cb469623c8f7.jsonl": ALL_FIELDS - {"thinking.text"},
    "copilot/agent-sessions/copilot_small_1.0.77.jsonl": ALL_FIELDS - {"tool_call.input"},
}


def _events(path: Path, **kwargs: Any) -> list[bytes]:
    enc = msgspec.json.Encoder()
    return [
        enc.encode(e)
        for e in agentminutes.iter_events(path, permissive=True, keep_raw=True, **kwargs)
    ]


def _coverage(events: list[Any], p: Plant) -> dict[str, set[str]]:
    """Which planted kinds each field kind carries (in the unredacted output)."""
    cov: dict[str, set[str]] = {}
    for e in events:
        kind = e["kind"]
        for f in FIELDS.get(kind, ()):
            value = (e.get(kind) or {}).get(f)
            if value:
                cov.setdefault(f"{kind}.{f}", set()).update(p.left_in(json.dumps(value)))
        raw = (e.get("provenance") or {}).get("raw")
        if raw:
            cov.setdefault("provenance.raw", set()).update(p.left_in(json.dumps(raw)))
    return cov


@pytest.mark.parametrize("fixture", sorted(PLANTED))
def test_planted_secrets_are_all_found_and_nothing_else_changes(
    fixture: str, tmp_path: Path
) -> None:
    harness = fixture.split("/")[0]
    transcript = tmp_path / "planted.jsonl"
    p = plant(FIXTURES / fixture, transcript, UNKNOWN[harness])

    plain = [json.loads(b) for b in _events(transcript)]
    cov = _coverage(plain, p)
    assert set(cov) >= PLANTED[fixture]
    for where in PLANTED[fixture]:
        assert cov[where] == set(KINDS), f"{where} lacks planted {set(KINDS) - cov[where]}"

    stage = redact(patterns=[USER_PATTERN], key=KEY)
    redacted = _events(transcript, stages=[stage])
    assert len(redacted) == len(plain)
    text = b"\n".join(redacted).decode()
    assert p.left_in(text) == []  # 100 % found
    # Valid JSON, and equal to the unredacted output with each planted span a marker.
    assert [json.loads(b) for b in redacted] == [p.expected(e, KEY) for e in plain]
    assert set(stage.counts) == set(KINDS)
    assert stage.summary().startswith(
        f"redacted {sum(stage.counts.values())} secrets (anthropic-key "
    )


def test_real_fixtures_hold_no_false_positives() -> None:
    """Every real transcript in fixtures/: nothing redacted but the reviewed true positives."""
    reviewed = {  # a password in a database URL in a docker command line
        ("gemini-cli/vibe-comparison/session-2026-04-25T08-23-e435870b.jsonl", "url-password"): 1,
    }
    found: Counter[tuple[str, str]] = Counter()
    for harness in ("claude-code", "codex", "copilot", "antigravity", "pi", "gemini-cli"):
        for path in transcripts(harness):
            stage = redact(key=KEY)
            try:
                for _ in agentminutes.iter_events(path, permissive=True, stages=[stage]):
                    pass
            except agentminutes.AgentminutesError:
                continue  # fixtures of broken input; their tests are elsewhere
            for detector, n in stage.counts.items():
                found[(str(path.relative_to(FIXTURES)), detector)] += n
    assert dict(found) == reviewed


@pytest.mark.parametrize(
    "text",
    [
        "commit 3f9a1c2b4d5e6f708192a3b4c5d6e7f8091a2b3c (HEAD -> main)",
        "session 550e8400-e29b-41d4-a716-446655440000 and req_011CUaBcDeFgHiJkLmNoPqRs",
        '"integrity": "sha512-Xo0aFvVh3s1+9nBoNclPjoUgX6VUvO0gT0FGlP8u5bPsCCPz4YLpz+Ba8xYP0Alk1QgXbQLhBdPkPq6xBm0iA=="',
        'files = [{file = "x.whl", hash = "sha256:3f9a1c2b4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8"}]',
        "OPENAI_API_KEY=sk-your-key-here and GITHUB_TOKEN=ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
        "API_KEY=${API_KEY} password: <password> token = get_token() secret = os.environ['SECRET']",
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
        "max_tokens=4096, next_page_token=CiAKGjBpNDd2Nmp2Zml2cXRlcjVxN2V0NnFhMxIAGBI, eos_token='</s>'",
        "PASS: test_redact_roundtrip (0.02s) and DEDUP_TOKEN: foo--bar--baz",
        "const storageKey = \"br_skill_resource_library_v2\"; $password = App::$_CONF->get('DB_PASSWORD');",
        "GOOGLE_APPLICATION_CREDENTIALS=path/to/service-account.json",
        "credentials: { private_key: serviceAccount.private_key, client_secret: cfg.clientSecret }",
        "Use a bearer token: Authorization: Bearer <token>, see -----BEGIN PRIVATE KEY-----...-----END PRIVATE KEY-----",
        "the task-management-system-design-document-v2 and the desk-lamp-with-usb-charger",
        "ssh://git@github.com:22/org/repo.git and http://localhost:8080@foo and mailto:someone@example.com",
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    ],
)
def test_look_alikes_are_left_alone(text: str) -> None:
    redactor = redact(key=KEY).redactor
    assert redactor.text(text) == text
    assert bytes(redactor.raw(Raw(msgspec.json.encode({"text": text})))) == msgspec.json.encode(
        {"text": text}
    )


def test_gates_pass_over_what_no_detector_can_confirm() -> None:
    """``"cwd":``, the ``k-`` of ``deepseek-v4``, base64's ``AA``, a scoped package's ``/@`` are no hits.

    Each hit is a detector tried by hand: these were nine in ten of a Claude Code
    transcript's hits, five in six of a Codex one's and half a Copilot CLI one's. A key or
    a URL's password next to them is still found.
    """
    path = FIXTURES / "claude-code/cabgov/d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl"
    base64 = b"AAAiAAAIgAAIAAAARAAABEAAB" * 4  # Codex's encrypted reasoning is such
    others = b' deepseek-v4-pro task-notes sk-short {"Cwd":"/"} node_modules/@types \\n@dataclass'
    blob = path.read_bytes() + others + base64
    assert blob.count(b'"cwd":') >= 10
    assert b"deepseek-v4" in blob
    hits = [
        blob[h.start() - 1 : h.end()]
        for mode in (DetectorSet(DETECTORS).bytes,)
        for gate in mode.gates
        for h in gate.finditer(blob)
    ]
    assert not [h for h in hits if h.lower().startswith(b"cwd")]
    assert not [h for h in hits if h[1:3] == b"AA"]
    assert not [h for h in hits if h[1:3] == b"k-" and h[:1] != b"s"]
    assert not [h for h in hits if h[1:2] == b"@" and h[:1] in b"/n"]
    key = "sk-proj-" + "Zq8Lx2Vw4Nc6Bm1Kp3Rt5Yh7Gd9Fs0Aj"
    text = f'{{"cwd":"/work","model":"deepseek-v4-pro","OPENAI_API_KEY":"{key}"}}'
    redactor = redact(key=KEY).redactor
    assert key not in redactor.text(text)
    assert "deepseek-v4-pro" in redactor.text(text)
    assert key.encode() not in bytes(redactor.raw(Raw(text.encode())))
    url = "see node_modules/@types and postgres://app:Hq7vLm2xRt9wKp4s@db.internal:5432/app"
    assert "Hq7vLm2xRt9wKp4s" not in redactor.text(url)
    assert "node_modules/@types" in redactor.text(url)


def test_base64_blobs_hide_no_tokens() -> None:
    """A token's prefix inside base64 (an image, a signature) is no token: it does not start one."""
    redactor = redact(key=KEY).redactor
    blob = (
        "iVBORw0KGgo"
        + "AKIA"
        + "ABCDEFGHIJKLMNOP"
        + "eyJhbGciOiJIUzI1NiJ9"
        + "ghp_"
        + "a1B2" * 9
        + "Zz09"
    )
    assert redactor.text(blob) == blob


def test_markers_name_the_detector_and_repeat_for_a_repeated_secret() -> None:
    token = "ghp_" + "aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5"
    stage = redact(key=KEY)
    out = stage.redactor.text(f"first {token}, again {token}")
    mark = marker(KEY, "github-token", token)
    assert out == f"first {mark}, again {mark}"
    assert stage.counts == Counter({"github-token": 2})
    assert stage.summary() == "redacted 2 secrets (github-token 2)"
    # Another run draws another key: the same secret gets another marker.
    assert redact().redactor.text(token) != redact().redactor.text(token)
    assert redact(key=KEY).redactor.text(token) == mark
    # Redacted text has nothing left to redact.
    again = redact(key=KEY)
    assert again.redactor.text(out) == out
    assert not again.counts


def test_payloads_stay_json_and_only_secret_string_values_change() -> None:
    secret = "Zx81kLmQ0pRsT2uVwX3yA7bC"
    source = (
        b'{\n  "env": {"API_KEY": "' + secret.encode() + b'", "n": 3, "ratio": 1.50, "f": false},\n'
        b'  "command": "export FOO_TOKEN=\\"' + secret.encode() + b'\\" && echo \\u00e9",\n'
        b'  "ghp_keep_keys": [1e3, null], "note": "nothing here"\n}'
    )
    stage = redact(key=KEY)
    out = bytes(stage.redactor.raw(Raw(source)))
    mark = marker(KEY, "secret-assignment", secret).encode()
    assert out == (
        b'{\n  "env": {"API_KEY": "' + mark + b'", "n": 3, "ratio": 1.50, "f": false},\n'
        b'  "command": "export FOO_TOKEN=\\"' + mark + b'\\" && echo \xc3\xa9",\n'
        b'  "ghp_keep_keys": [1e3, null], "note": "nothing here"\n}'
    )
    assert json.loads(out)["env"]["API_KEY"] == mark.decode()
    assert stage.counts == Counter({"secret-assignment": 2})
    # A payload without secrets is handed back as it was, the same object.
    clean = Raw(b'{"command": "ls -la", "token_count": 12}')
    assert stage.redactor.raw(clean) is clean


def test_every_text_of_an_event_is_redacted() -> None:
    token = "glpat-" + "Q1w2E3r4T5y6U7i8O9p0"
    call = Event(
        kind="tool_call",
        tool_call=ToolCall(
            tool_call_id="c1",
            name="Bash",
            kind="execute",
            input=Raw(
                json.dumps({"command": f"git push https://oauth2:{token}@gitlab.com/x"}).encode()
            ),
        ),
    )
    result = Event(
        kind="tool_result",
        tool_result=ToolResult(
            tool_call_id="c1",
            content=[ContentBlock(kind="text", text=f"remote: {token}")],
            enrichment=Raw(json.dumps({"stdout": token}).encode()),
        ),
    )
    stage = redact(key=KEY)
    stage.redactor.events([call, result])
    encoded = msgspec.json.encode([call, result]).decode()
    assert token not in encoded
    assert encoded.count(marker(KEY, "gitlab-token", token)) == 3


async def test_the_stage_passes_batches_and_marks_through() -> None:
    token = "xoxb-" + "123456789012-123456789012-" + "aB3dE5fG7hI9jK1lM3nO5pQ7"

    async def source():  # type: ignore[no-untyped-def]
        for i in range(3):
            ev = Event(
                kind="tool_result",
                tool_result=ToolResult(
                    tool_call_id=f"c{i}", content=[ContentBlock(kind="text", text=token)]
                ),
            )
            yield Batch(events=[ev] if i != 1 else [], mark=("pos", i))

    stage = redact(key=KEY)
    out = [b async for b in apply_stages(source(), [stage])]
    assert [b.mark for b in out] == [("pos", 0), ("pos", 1), ("pos", 2)]
    assert [len(b.events) for b in out] == [1, 0, 1]
    assert stage.counts == Counter({"slack-token": 2})


def test_user_patterns_and_the_config_file(tmp_path: Path) -> None:
    config = tmp_path / "redact.toml"
    config.write_text(
        '[redact]\ndisable = ["url-password"]\n\n'
        "[[redact.pattern]]\nname = \"acme-id\"\nregex = 'ACME-(?P<secret>[0-9]{6})'\n"
    )
    stage = redact(patterns=[r"ticket-[0-9]{4}"], config=str(config), key=KEY)
    out = stage.redactor.text("ACME-123456 ticket-0042 postgres://u:hunter2hunter@db/x")
    assert out == (
        f"ACME-{marker(KEY, 'acme-id', '123456')} {marker(KEY, 'user-pattern', 'ticket-0042')} "
        "postgres://u:hunter2hunter@db/x"
    )
    with pytest.raises(UsageError, match=r"unterminated|missing"):
        redact(patterns=["(unclosed"])
    with pytest.raises(UsageError, match="empty string"):
        redact(patterns=["x*"])
    with pytest.raises(UsageError, match="no detector named"):
        redact(disable=["no-such-detector"])
    config.write_text("[redact]\ndisable = 3\n")
    with pytest.raises(UsageError, match="disable lists built-in detectors"):
        redact(config=str(config))
    config.write_text("not = [toml")
    with pytest.raises(UsageError, match="not TOML"):
        redact(config=str(config))
