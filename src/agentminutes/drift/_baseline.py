"""Baselines: the vocabulary of the transcripts an adapter was checked against, shipped as data.

A baseline file (in the harness folder, where its description says: ``harness/<name>/baselines/<harness>.json``) is built by
``scripts/build_drift_baselines.py`` from the project's own fixtures
(``fixtures/<harness>/``) and records which fixtures, of which harness
versions, fed it::

    {
      "harness": "claude-code",
      "format": 1,
      "generated_from_version": "2.1.220",      # newest harness version among the fixtures
      "fixtures": [{"path": "claude-code/ccl/….jsonl", "version": "2.0.76", "records": 120}, …],
      "record_types": {
        "assistant": {
          "records": 262,                       # records of this type in the fixtures
          "keys": ["cwd", "message", "message.content", …],
          "required": ["message", "type", …],   # keys every one of those records has
          "discriminators": {"message.content[].type": ["text", "thinking", "tool_use"], …}
        }, …
      }
    }

Key lists keep the reference's shape (``generated_from_version``, ``record_types``,
``keys``, ``discriminators``); ``format``, ``fixtures``, ``records`` and
``required`` are ours. A harness may ship more than one baseline: an *era*
file ``<harness>@<version>.json`` holds the vocabulary of the fixtures up to
that version, and a transcript is compared with the baseline generated from
the nearest version at or below its own (the newest when it records none).
"""

from __future__ import annotations

import importlib.resources
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cmp_to_key
from typing import Final

import msgspec

from agentminutes.harness.drift_vocabulary import Vocab
from agentminutes.versions import version_newer

__all__ = (
    "BASELINE_FORMAT",
    "Baseline",
    "Diff",
    "FixtureInfo",
    "RecordVocab",
    "baseline_from_vocab",
    "diff",
    "encode_baseline",
    "load_baseline",
    "select_baseline",
    "shipped_baselines",
)

#: Revision of the baseline file format.
BASELINE_FORMAT: Final = 1

#: A record type needs this many baseline records before its always-present keys
#: count as required (one record says nothing about what is optional).
MIN_RECORDS_FOR_REQUIRED: Final = 2


class RecordVocab(msgspec.Struct, omit_defaults=True, kw_only=True):
    """One record type's vocabulary in a baseline."""

    records: int = 0
    keys: list[str]
    required: list[str] | None = None
    discriminators: dict[str, list[str]] | None = None


class FixtureInfo(msgspec.Struct, omit_defaults=True, kw_only=True):
    """One transcript that fed a baseline: its path under ``fixtures/``, version and size."""

    path: str
    version: str = ""
    records: int = 0


class Baseline(msgspec.Struct, omit_defaults=True, kw_only=True):
    """The committed vocabulary of one harness's transcript format."""

    harness: str
    format: int = BASELINE_FORMAT
    generated_from_version: str = ""
    fixtures: list[FixtureInfo] | None = None
    #: Real transcripts (not shipped) whose vocabulary fed the baseline too, by their
    #: path in the corpus they came from (``scripts/build_drift_baselines.py --corpus``).
    corpus: list[FixtureInfo] | None = None
    record_types: dict[str, RecordVocab]


def baseline_from_vocab(
    vocab: Vocab, *, version: str = "", fixtures: Iterable[FixtureInfo] = ()
) -> Baseline:
    """Freeze accumulated vocabulary into a :class:`Baseline`, everything sorted."""
    types: dict[str, RecordVocab] = {}
    for rtype in sorted(vocab.types):
        stats = vocab.types[rtype]
        required = sorted(
            k
            for k, n in stats.keys.items()
            if n == stats.records and vocab.spec.presence_checked(k, rtype)
        )
        disc = {p: sorted(stats.values[p]) for p in sorted(stats.values)}
        types[rtype] = RecordVocab(
            records=stats.records,
            keys=sorted(stats.keys),
            required=required or None,
            discriminators=disc or None,
        )
    return Baseline(
        harness=vocab.spec.harness,
        generated_from_version=version,
        fixtures=list(fixtures) or None,
        record_types=types,
    )


def encode_baseline(baseline: Baseline) -> bytes:
    """The file form of *baseline*: two-space indented JSON and a final newline."""
    return msgspec.json.format(msgspec.json.encode(baseline), indent=2) + b"\n"


_DECODER: Final = msgspec.json.Decoder(Baseline)


def shipped_baselines(harness: str) -> list[Baseline]:
    """Every baseline the package ships for *harness* (its main file and any era files)."""
    place = baseline_place(harness)
    if place is None:
        return []
    package, folder, stem = place
    found: list[Baseline] = []
    for entry in (importlib.resources.files(package) / folder).iterdir():
        name = entry.name
        if name == f"{stem}.json" or (name.startswith(f"{stem}@") and name.endswith(".json")):
            found.append(_DECODER.decode(entry.read_bytes()))
    return found


def baseline_place(harness: str) -> tuple[str, str, str] | None:
    """Where *harness*'s description puts its baseline: package, folder in it, file stem.

    Era baselines (``<stem>@<version>.json``) lie beside the main one. ``None``
    for a harness without a baseline.
    """
    from agentminutes.harness.registry import described

    found = described(harness)
    if found is None or found.baseline is None:
        return None
    package, _, rel = found.baseline.partition(":")
    folder, _, name = rel.rpartition("/")
    return package, folder, name.removesuffix(".json")


def select_baseline(candidates: list[Baseline], version: str) -> Baseline | None:
    """The baseline generated from the nearest version at or below *version*.

    Without a *version*, the newest baseline; for a version older than every
    baseline, the oldest.
    """
    if not candidates:
        return None

    def compare(a: Baseline, b: Baseline) -> int:
        x, y = a.generated_from_version, b.generated_from_version
        return 1 if version_newer(x, y) else -1 if version_newer(y, x) else 0

    ordered = sorted(candidates, key=cmp_to_key(compare))
    if not version:
        return ordered[-1]
    best: Baseline | None = None
    for b in ordered:
        if not version_newer(b.generated_from_version, version):
            best = b
    return best or ordered[0]


def load_baseline(harness: str, version: str = "") -> Baseline | None:
    """The shipped baseline to compare a *harness* transcript of *version* with, if any."""
    return select_baseline(shipped_baselines(harness), version)


@dataclass
class Diff:
    """What a transcript's vocabulary has that its baseline lacks, and the reverse."""

    new_types: list[str] = field(default_factory=list)
    #: record type -> new key paths (sorted)
    new_keys: dict[str, list[str]] = field(default_factory=dict)
    #: record type -> [(key, records lacking it, records of the type)]
    missing_keys: dict[str, list[tuple[str, int, int]]] = field(default_factory=dict)
    #: record type -> discriminator path -> new values (sorted)
    new_values: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    #: baseline record types the transcript never used (informational)
    unexercised: list[str] = field(default_factory=list)

    @property
    def drift(self) -> bool:
        """True when anything beyond unexercised baseline types differs."""
        return bool(self.new_types or self.new_keys or self.missing_keys or self.new_values)


def diff(baseline: Baseline, observed: Vocab) -> Diff:
    """Compare *observed* vocabulary with *baseline*."""
    out = Diff()
    known = baseline.record_types
    for rtype in sorted(observed.types):
        stats = observed.types[rtype]
        base = known.get(rtype)
        if base is None:
            out.new_types.append(rtype)
            continue
        base_keys = set(base.keys)
        new = sorted(k for k in stats.keys if k not in base_keys)
        if new:
            out.new_keys[rtype] = new
        if base.required and base.records >= MIN_RECORDS_FOR_REQUIRED:
            missing = [
                (k, stats.records - stats.keys.get(k, 0), stats.records)
                for k in base.required
                if stats.keys.get(k, 0) < stats.records
            ]
            if missing:
                out.missing_keys[rtype] = missing
        base_disc = base.discriminators or {}
        for path in sorted(stats.values):
            allowed = set(base_disc.get(path, ()))
            values = sorted(v for v in stats.values[path] if v not in allowed)
            if values:
                out.new_values.setdefault(rtype, {})[path] = values
    out.unexercised = sorted(t for t in known if t not in observed.types)
    return out
