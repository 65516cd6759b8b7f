"""``view --html``: one self-contained HTML page of a session, safe to open and to share.

The page needs no network: its CSS, its script and its chart (an SVG written
here) are inline. Every text from the transcript goes through
:func:`html.escape`, and a Content-Security-Policy allows only this page's own
script (by its hash) and style: a ``<script>`` or an ``<img onerror=…>`` in a
message is shown as text and nothing of it runs. Redaction is on unless the
command says otherwise, and the page says which.

The page is a timeline of turns (each a ``<details>``, folded once a session
has many), tool calls folded with their input and result, subagents as nested
sections under the call that started them, a search box that hides the turns
not matching, and a chart of tokens and cost per turn. Huge results are cut
(``full`` keeps them whole) and turns off screen are not laid out
(``content-visibility``), so a page of a 100 MB transcript opens in seconds.
No template engine: the page is a few fixed pieces and escaped text, which
``html.escape`` and f-strings say plainly.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator
from decimal import Decimal
from html import escape
from typing import Final

from agentminutes.view.model import AgentView, SessionView, ToolStep, Turn, block_text
from agentminutes.view.terminal import (
    agent_facts,
    input_summary,
    session_headline,
    tokens_text,
    turn_headline,
)

__all__ = ("RESULT_CHARS", "render_page", "svg_bars", "write_page")

#: Characters of a tool result kept on the page (the rest is cut; ``--full`` keeps all).
RESULT_CHARS: Final = 8_000
#: Characters of a message or of thinking kept on the page.
TEXT_CHARS: Final = 40_000
#: Past this many turns, turns start folded.
OPEN_TURNS: Final = 60

CSS: Final = """
:root{--fg:#1f2328;--mute:#656d76;--line:#d0d7de;--bg:#fff;--soft:#f6f8fa;--accent:#0969da;
--err:#cf222e;--ok:#1a7f37;--think:#8250df}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;color:var(--fg);
background:var(--bg);margin:0}
header{padding:16px 24px;border-bottom:1px solid var(--line);background:var(--soft)}
h1{font-size:18px;margin:0 0 8px}
.facts{border-collapse:collapse}
.facts td{padding:1px 12px 1px 0;vertical-align:top}
.facts td:first-child{color:var(--mute)}
.note{margin:8px 0;padding:6px 10px;border-left:3px solid var(--accent);background:#ddf4ff}
.note.off{border-color:var(--err);background:#ffebe9}
.tools{display:flex;gap:8px;align-items:center;margin-top:10px}
#q{flex:1;max-width:420px;padding:6px 8px;border:1px solid var(--line);border-radius:6px}
button{padding:5px 10px;border:1px solid var(--line);border-radius:6px;background:#fff;cursor:pointer}
#count{color:var(--mute)}
main{padding:8px 24px 40px}
.turn{border:1px solid var(--line);border-radius:8px;margin:10px 0;content-visibility:auto;
contain-intrinsic-size:auto 120px}
.turn>details>summary{padding:8px 12px;background:var(--soft);border-radius:8px;cursor:pointer;
font-weight:600}
.body{padding:6px 14px 10px}
.prompt{border-left:3px solid var(--ok);padding:4px 10px;margin:6px 0;background:#f0fff4}
.msg,.prompt,pre{white-space:pre-wrap;overflow-wrap:anywhere}
.msg{margin:6px 0}
.model{color:var(--mute);font-size:12px}
pre{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:var(--soft);
padding:6px 8px;border-radius:6px;margin:4px 0;max-height:480px;overflow:auto}
details.tool{margin:6px 0;border:1px solid var(--line);border-radius:6px}
details.tool>summary{padding:4px 8px;cursor:pointer;font-family:ui-monospace,Menlo,monospace;
font-size:12px}
details.tool.error{border-color:var(--err)}
.errmark{color:var(--err);font-weight:700}
.tool .inner{padding:2px 8px 6px}
.label{color:var(--mute);font-size:11px;text-transform:uppercase;letter-spacing:.04em}
details.thinking>summary{color:var(--think);cursor:pointer;font-style:italic}
.system{color:var(--mute);font-size:12px}
.harness{color:#0550ae;font-size:12px}
.agent{border-left:3px solid var(--think);margin:8px 0 4px 8px;padding-left:10px}
.agent>h3{font-size:13px;margin:6px 0;color:var(--think)}
.cut{color:var(--mute);font-style:italic;font-size:12px}
.answer{border:2px solid var(--ok);border-radius:8px;padding:8px 14px;margin:14px 0}
.answer h2{font-size:15px;margin:0 0 6px;color:var(--ok)}
.hidden{display:none}
svg{display:block;margin-top:10px}
svg text{font:10px system-ui,sans-serif;fill:var(--mute)}
.bar-in{fill:#54aeff}.bar-cache{fill:#b6e3ff}.bar-out{fill:#fb8f44}.cost{fill:none;stroke:#8250df;
stroke-width:2}
.legend rect{stroke:none}
"""

SCRIPT: Final = """
(function(){
var q=document.getElementById('q'),count=document.getElementById('count');
var turns=Array.prototype.slice.call(document.querySelectorAll('section.turn'));
var texts=null;
function filter(){
  var needle=q.value.trim().toLowerCase(),shown=0;
  if(needle&&!texts){texts=turns.map(function(t){return t.textContent.toLowerCase();});}
  turns.forEach(function(t,i){
    var hit=!needle||texts[i].indexOf(needle)>=0;
    t.classList.toggle('hidden',!hit);
    if(hit){shown++;if(needle){t.querySelector('details').open=true;}}
  });
  count.textContent=needle?shown+' of '+turns.length+' turns':turns.length+' turns';
}
q.addEventListener('input',filter);
function all(open){
  document.querySelectorAll('section.turn:not(.hidden) details').forEach(function(d){d.open=open;});
}
document.getElementById('open').addEventListener('click',function(){all(true);});
document.getElementById('close').addEventListener('click',function(){all(false);});
filter();
})();
"""


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def _cut(text: str, limit: int) -> tuple[str, int]:
    if limit and len(text) > limit:
        return text[:limit], len(text) - limit
    return text, 0


def _cut_note(n: int) -> str:
    return f'<div class="cut">… {n:,} more characters (view --html --full keeps all)</div>'


def svg_bars(
    series: list[tuple[str, list[tuple[str, float]]]],
    *,
    costs: list[float] | None = None,
    width: int = 720,
    height: int = 160,
    title: str = "",
) -> str:
    """A stacked bar chart as inline SVG: one bar per ``(label, [(class, value), …])``,
    and, with *costs*, the cumulative cost as a line on its own scale."""
    n = max(1, len(series))
    left, bottom, top = 48, 20, 34
    plot_w, plot_h = width - left - 60, height - bottom - top
    peak = max((sum(v for _, v in parts) for _, parts in series), default=0) or 1
    bar = plot_w / n
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">',
        f'<text x="{left}" y="11">{escape(title)}</text>',
        f'<text x="4" y="{top + 8}">{escape(tokens_text(int(peak)))}</text>',
        f'<text x="4" y="{top + plot_h}">0</text>',
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" '
        'stroke="#d0d7de"/>',
    ]
    for i, (label, parts) in enumerate(series):
        y = float(top + plot_h)
        for cls, v in parts:
            h = plot_h * v / peak
            if h <= 0:
                continue
            y -= h
            out.append(
                f'<rect class="{cls}" x="{left + i * bar + bar * 0.1:.1f}" y="{y:.1f}" '
                f'width="{max(bar * 0.8, 0.5):.1f}" height="{h:.1f}"><title>{escape(label)} '
                f"{escape(cls[4:])}: {int(v):,}</title></rect>"
            )
    if costs and max(costs) > 0:
        top_cost = max(costs)
        points = " ".join(
            f"{left + (i + 0.5) * bar:.1f},{top + plot_h - plot_h * c / top_cost:.1f}"
            for i, c in enumerate(costs)
        )
        out.append(f'<polyline class="cost" points="{points}"/>')
        out.append(f'<text x="{left + plot_w + 4}" y="{top + 8}">${top_cost:.2f}</text>')
    legend = [("bar-in", "input"), ("bar-cache", "cache"), ("bar-out", "output")]
    out.append('<g class="legend">')
    for i, (cls, name) in enumerate(legend):
        x = left + i * 64
        out.append(f'<rect class="{cls}" x="{x}" y="17" width="9" height="9"/>')
        out.append(f'<text x="{x + 12}" y="25">{name}</text>')
    if costs and max(costs) > 0:
        x = left + len(legend) * 64
        out.append(f'<line x1="{x}" y1="21" x2="{x + 10}" y2="21" class="cost"/>')
        out.append(f'<text x="{x + 14}" y="25">cumulative cost</text>')
    out.append("</g>")
    out.append("</svg>")
    return "".join(out)


def _chart(view: SessionView) -> str:
    turns = [t for t in view.main.turns if t.requests]
    if not turns:
        return ""
    series = []
    costs: list[float] = []
    running = Decimal(0)
    for t in turns:
        u = t.usage
        series.append(
            (
                f"turn {t.number}",
                [
                    ("bar-in", float(u.input_tokens)),
                    ("bar-cache", float(u.cache_read_input_tokens + u.cache_creation_input_tokens)),
                    ("bar-out", float(u.output_tokens)),
                ],
            )
        )
        running += t.cost or 0
        costs.append(float(running))
    return svg_bars(series, costs=costs, title="tokens per turn, cumulative cost")


class _Writer:
    def __init__(self, full: bool) -> None:
        self.full = full

    def text(self, text: str, limit: int = TEXT_CHARS) -> str:
        shown, cut = _cut(text, 0 if self.full else limit)
        return escape(shown) + (_cut_note(cut) if cut else "")

    def agent(self, agent: AgentView, open_turns: bool) -> Iterator[str]:
        for turn in agent.turns:
            yield from self.turn(turn, open_turns)

    def turn(self, turn: Turn, open_turns: bool) -> Iterator[str]:
        yield f'<section class="turn" id="turn-{turn.number}" data-turn="{turn.number}">'
        yield f"<details{' open' if open_turns else ''}><summary>{escape(turn_headline(turn))}"
        yield '</summary><div class="body">'
        if turn.prompt is not None and turn.prompt.user_message is not None:
            text = block_text(turn.prompt.user_message.content)
            yield f'<div class="prompt">{self.text(text)}</div>'
        for step in turn.steps:
            if step.tool is not None:
                yield from self.tool(step.tool)
                continue
            ev = step.event
            if ev.assistant_message is not None:
                text = block_text(ev.assistant_message.content)
                if text.strip():
                    model = ev.assistant_message.model
                    yield '<div class="msg assistant">'
                    if model:
                        yield f'<div class="model">{escape(model)}</div>'
                    yield f"{self.text(text)}</div>"
            elif ev.thinking is not None and ev.thinking.text.strip():
                words = len(ev.thinking.text.split())
                yield f'<details class="thinking"><summary>thinking ({words:,} words)</summary>'
                yield f"<pre>{self.text(ev.thinking.text)}</pre></details>"
            elif ev.user_message is not None:
                text = block_text(ev.user_message.content)
                yield '<details class="harness"><summary>harness message</summary><pre>'
                yield f"{self.text(text, RESULT_CHARS)}</pre></details>"
            elif ev.system is not None:
                s = ev.system
                cls = "system errmark" if s.level == "error" else "system"
                line = s.subtype + (f" ({s.level})" if s.level else "")
                detail = (": " + s.text) if s.text else ""
                yield f'<div class="{cls}">{self.text(line + detail, 2_000)}</div>'
        yield "</div></details></section>"

    def tool(self, step: ToolStep) -> Iterator[str]:
        error = step.is_error
        name = escape(step.name)
        call_id = escape(step.call_id)
        given = input_summary(step, True)  # once: the summary line and the whole input
        summary = given.split("\n", 1)[0][:160]
        cls = "tool error" if error else "tool"
        yield f'<details class="{cls}" data-tool="{name}" data-call-id="{call_id}">'
        yield f"<summary>● <b>{name}</b> {escape(summary)}"
        if error:
            yield ' <span class="errmark">✗ error</span>'
        if step.subagents:
            yield f' <span class="label">{len(step.subagents)} subagent(s)</span>'
        yield '</summary><div class="inner">'
        if step.call is not None:
            yield '<div class="label">input</div>'
            yield f"<pre>{self.text(given, RESULT_CHARS)}</pre>"
        for r in step.results:
            if r.tool_result is None:
                continue
            label = "error" if r.tool_result.is_error else "result"
            yield f'<div class="label">{label}</div>'
            yield f"<pre>{self.text(block_text(r.tool_result.content), RESULT_CHARS)}</pre>"
        if step.call is not None and not step.results:
            yield '<div class="cut">no result recorded</div>'
        yield "</div></details>"
        for sub in step.subagents:
            yield from self.subagent(sub)

    def subagent(self, agent: AgentView) -> Iterator[str]:
        facts = " · ".join(agent_facts(agent))
        yield f'<section class="agent"><h3>▼ {escape(agent.label)} · {escape(facts)}'
        yield "</h3>"
        yield from self.agent(agent, True)
        yield "</section>"


def render_page(view: SessionView, *, full: bool = False) -> Iterator[str]:
    """The page of *view*, piece by piece."""
    title = f"Session {view.meta.session_id or view.path}"
    script = SCRIPT
    csp = (
        "default-src 'none'; img-src data:; "
        f"style-src {_csp_hash(CSS)}; script-src {_csp_hash(script)}; "
        "base-uri 'none'; form-action 'none'"
    )
    yield '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
    yield f'<meta http-equiv="Content-Security-Policy" content="{escape(csp)}">'
    yield '<meta name="viewport" content="width=device-width,initial-scale=1">'
    yield '<meta name="referrer" content="no-referrer">'
    yield f"<title>{escape(title)}</title><style>{CSS}</style></head><body>"
    yield f'<header><h1>{escape(title)}</h1><table class="facts">'
    for label, value in session_headline(view):
        if label != "redaction":
            yield f"<tr><td>{escape(label)}</td><td>{escape(value)}</td></tr>"
    yield "</table>"
    if view.redaction.startswith("off"):
        yield '<div class="note off" id="redaction">Redaction is off: secrets in the '
        yield "transcript are shown as they were recorded.</div>"
    else:
        yield '<div class="note" id="redaction">Redacted: secrets (API keys, tokens, '
        yield "passwords …) are replaced by [REDACTED:…] markers; "
        yield f"{escape(view.redaction)}.</div>"
    yield _chart(view)
    yield '<div class="tools"><input id="q" type="search" placeholder="Filter turns…" '
    yield 'aria-label="Filter turns" autocomplete="off"><span id="count"></span>'
    yield '<button id="open" type="button">Expand all</button>'
    yield '<button id="close" type="button">Collapse all</button></div></header><main>'
    writer = _Writer(full)
    open_turns = len(view.main.turns) <= OPEN_TURNS
    yield from writer.agent(view.main, open_turns)
    for sub in view.unattached:
        yield from writer.subagent(sub)
    answer = view.stats.final_answer
    if answer:
        yield '<section class="answer" id="final-answer"><h2>Final answer</h2>'
        yield f'<div class="msg">{writer.text(answer)}</div></section>'
    yield f"</main><script>{script}</script></body></html>\n"


def write_page(view: SessionView, path: str, *, full: bool = False) -> int:
    """Write the page of *view* to *path*; return its size in bytes."""
    size = 0
    with open(path, "w", encoding="utf-8", errors="replace", newline="\n") as f:
        for piece in render_page(view, full=full):
            f.write(piece)
            size += len(piece.encode("utf-8", "replace"))
    return size
