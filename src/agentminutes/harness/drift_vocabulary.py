"""Vocabulary: the record types, key paths and discriminator values a transcript uses.

A transcript's *vocabulary* is what strict parsing tolerates silently and a
format change alters first: the record types (each harness's own
discriminator), the key paths each record type carries, and the values of a
few churn-prone fields (content block types, tool names, subtypes). Comparing
a transcript's vocabulary with a baseline taken from the transcripts the
adapters were checked against shows additive drift before it breaks parsing.

Records are decoded lazily, one object level at a time, into ``msgspec.Raw``
values: a multi-megabyte tool result is scanned, never materialized.

How each harness names its record types and where its churn hides is a
:class:`Vocabulary`, declared in the harness's folder (``harness/<name>/drift.py``,
named by its description's ``vocabulary``); the adapters themselves are not
involved. The type lives in the harness layer so the folders can declare it;
the scan that uses it is :mod:`agentminutes.drift`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Final

import msgspec
from msgspec import Raw

from agentminutes.harness.base import BOM

__all__ = (
    "UNTYPED",
    "Obj",
    "RecordStats",
    "Vocab",
    "VocabError",
    "Vocabulary",
    "as_list",
    "as_obj",
    "as_str",
    "objects",
    "prefixes",
    "reach",
    "read_file",
    "split_document",
    "string_at",
    "type_field",
    "typed_by",
)

#: A JSON object one level deep: its keys, each value still undecoded.
Obj = dict[str, Raw]

#: The record type of a record without a usable discriminator.
UNTYPED: Final = "(untyped)"

_OBJ: Final = msgspec.json.Decoder(Obj)
_LIST: Final = msgspec.json.Decoder(list[Raw])
_STR: Final = msgspec.json.Decoder(str)


def _first(raw: Raw) -> int:
    view = memoryview(raw)
    return view[0] if len(view) else 0


def as_obj(raw: Raw) -> Obj | None:
    """*raw* decoded one level as an object, or ``None`` if it is not one."""
    if _first(raw) != 0x7B:  # "{"
        return None
    try:
        return _OBJ.decode(raw)
    except msgspec.DecodeError:
        return None


def as_list(raw: Raw) -> list[Raw] | None:
    """*raw* decoded one level as an array, or ``None`` if it is not one."""
    if _first(raw) != 0x5B:  # "["
        return None
    try:
        return _LIST.decode(raw)
    except msgspec.DecodeError:
        return None


def objects(raw: Raw | None) -> Iterator[Obj]:
    """The objects in the JSON array *raw* (other elements, and a value that is none, give none)."""
    for item in (as_list(raw) or []) if raw is not None else []:
        rec = as_obj(item)
        if rec is not None:
            yield rec


def as_str(raw: Raw) -> str | None:
    """*raw* decoded as a string, or ``None`` if it is not one."""
    if _first(raw) != 0x22:  # '"'
        return None
    try:
        return _STR.decode(raw)
    except msgspec.DecodeError:
        return None


def reach(record: Obj, path: str) -> list[Raw]:
    """The values a dotted *path* reaches in *record*.

    A segment ending in ``[]`` goes into every element of an array. Missing
    segments and values of the wrong shape reach nothing: vocabulary only
    enumerates, it never fails.
    """
    objs: list[Obj] = [record]
    values: list[Raw] = []
    segments = path.split(".")
    for i, seg in enumerate(segments):
        each = seg.endswith("[]")
        key = seg[:-2] if each else seg
        values = []
        for obj in objs:
            child = obj.get(key)
            if child is None:
                continue
            if not each:
                values.append(child)
                continue
            items = as_list(child)
            if items is not None:
                values.extend(items)
        if i < len(segments) - 1:
            objs = [o for o in map(as_obj, values) if o is not None]
    return values


def string_at(record: Obj, path: str) -> str | None:
    """The string at *path* (no ``[]`` segments), or ``None``."""
    found = reach(record, path)
    return as_str(found[0]) if found else None


def type_field(record: Obj) -> str:
    """The record type most formats use: the top-level ``type`` string."""
    value = record.get("type")
    found = as_str(value) if value is not None else None
    return found or UNTYPED


#: (record-type lookup table) record type, its base before "/", or "*" -> paths.
PathTable = Mapping[str, tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """How to read one harness's vocabulary.

    Args:
        harness: the harness name.
        record_type: names a record's type from its top-level object.
            Composite types join the parts with ``/`` (``response_item/message``).
        discriminators: paths whose string values are enumerable vocabulary,
            by record type. A table key applies to that record type, to every
            composite type whose base (before ``/``) it is, and ``"*"`` to every
            type. A path ending in ``.*`` enumerates the keys of the objects it
            reaches instead of values.
        deep: key paths (``[]`` segments allowed) whose objects' keys are listed
            too, beyond the default depth of two (``key`` and ``key.sub``);
            keyed like *discriminators*.
        dynamic: key paths whose children are names or ids, not vocabulary:
            their keys are listed as ``path.*``.
        dynamic_key: further children to list as ``*``: ``(parent path, key)``.
        normalize: ``(path, value) -> value``, or ``None`` for a value that is
            user configuration rather than format vocabulary (an MCP tool's
            name), which is left out so it never reads as drift.
        document: splits a transcript that is one JSON document (not JSON
            lines) into ``(record type, record)`` pairs; ``None`` when the
            harness writes only JSON lines.
        source: for a harness whose sessions are not transcript files (a
            database, a folder of documents): reads the ``(record type,
            record)`` pairs of the source at a path (the database, the folder,
            or a file inside it).
        known: discriminator values the harness is known to write whether or
            not a fixture shows them (its built-in tool names), by path; the
            baseline builder adds them, so a real home's ordinary tools are no
            drift.
        text: the transcript is text, not JSON (Aider's Markdown history):
            *document* is handed the whole file as one JSON string.
    """

    harness: str
    record_type: Callable[[Obj], str] = type_field
    discriminators: PathTable = field(default_factory=dict)
    deep: PathTable = field(default_factory=dict)
    dynamic: frozenset[str] = frozenset()
    dynamic_key: Callable[[str, str], bool] | None = None
    normalize: Callable[[str, str], str | None] | None = None
    document: Callable[[Raw], Iterator[tuple[str, Obj]]] | None = None
    source: Callable[[str], Iterator[tuple[str, Obj]]] | None = None
    known: Mapping[str, frozenset[str]] = field(default_factory=dict)
    text: bool = False

    def paths(self, table: PathTable, rtype: str) -> tuple[str, ...]:
        """The paths *table* configures for record type *rtype*."""
        base = rtype.split("/", 1)[0]
        found = table.get(rtype, ())
        if base != rtype:
            found += table.get(base, ())
        return found + table.get("*", ())

    def _key(self, parent: str, key: str) -> str:
        if parent in self.dynamic or (
            self.dynamic_key is not None and self.dynamic_key(parent, key)
        ):
            key = "*"
        return f"{parent}.{key}" if parent else key

    def keys(self, record: Obj, rtype: str) -> set[str]:
        """The key paths of *record*: depth two, plus the configured deep paths."""
        out: set[str] = set()
        for key, value in record.items():
            out.add(key)
            sub = as_obj(value)
            if sub:
                out.update(self._key(key, k) for k in sub)
        for path in self.paths(self.deep, rtype):
            for value in reach(record, path):
                sub = as_obj(value)
                if sub:
                    out.update(self._key(path, k) for k in sub)
        return out

    def presence_checked(self, key: str, rtype: str) -> bool:
        """Whether a record of type *rtype* that lacks *key* is news.

        Only top-level keys and the keys of the configured deep paths are: the
        second level of other objects varies with a subtype (a progress
        record's ``data``, a tool's result sidecar) more than with the format.
        """
        if "." not in key:
            return True
        return any(key.startswith(path + ".") for path in self.paths(self.deep, rtype))

    def values(self, record: Obj, rtype: str) -> Iterator[tuple[str, str]]:
        """The ``(path, value)`` discriminator pairs of *record*."""
        for path in self.paths(self.discriminators, rtype):
            if path.endswith(".*"):
                for value in reach(record, path[:-2]):
                    sub = as_obj(value)
                    if sub:
                        for k in sub:
                            yield path, k
                continue
            for value in reach(record, path):
                text = as_str(value)
                if text is None:
                    continue
                if self.normalize is not None:
                    text = self.normalize(path, text)
                    if text is None:
                        continue
                yield path, text


@dataclass(slots=True)
class RecordStats:
    """One record type's observed vocabulary: how many records, keys and values."""

    records: int = 0
    #: Key path -> number of records that carry it.
    keys: dict[str, int] = field(default_factory=dict)
    #: Discriminator path -> values seen.
    values: dict[str, set[str]] = field(default_factory=dict)


class VocabError(Exception):
    """A line that is not a JSON object: the vocabulary pass cannot go on."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.reason = reason


@dataclass
class Vocab:
    """Vocabulary accumulated over one or more transcripts of one harness."""

    spec: Vocabulary
    types: dict[str, RecordStats] = field(default_factory=dict)
    #: Records read so far.
    records: int = 0

    def add(self, record: Obj, rtype: str | None = None) -> None:
        """Add one record (its type named by the harness's rule unless given)."""
        spec = self.spec
        if rtype is None:
            rtype = spec.record_type(record)
        stats = self.types.get(rtype)
        if stats is None:
            stats = self.types[rtype] = RecordStats()
        stats.records += 1
        self.records += 1
        counts = stats.keys
        for key in spec.keys(record, rtype):
            counts[key] = counts.get(key, 0) + 1
        for path, value in spec.values(record, rtype):
            seen = stats.values.get(path)
            if seen is None:
                seen = stats.values[path] = set()
            seen.add(value)

    def add_lines(self, lines: Iterable[tuple[int, bytes]]) -> list[int]:
        """Add the records of numbered JSON lines; return the non-blank line numbers.

        Lines are trimmed as the parser trims them (byte-order mark on line 1,
        surrounding white space); blank lines are passed over.

        Raises:
            VocabError: a non-blank line is not a JSON object.
        """
        nonblank: list[int] = []
        for lineno, raw in lines:
            line = raw.strip()
            if lineno == 1 and line.startswith(BOM):
                line = line[3:].strip()
            if not line:
                continue
            nonblank.append(lineno)
            try:
                record = _OBJ.decode(line)
            except msgspec.ValidationError as exc:
                raise VocabError(lineno, f"not a JSON object: {exc}") from None
            except msgspec.DecodeError as exc:
                raise VocabError(lineno, f"invalid JSON: {exc}") from None
            self.add(record)
        return nonblank

    def add_document(self, data: bytes) -> bool:
        """Add the records of a whole-document transcript; False if it is not one."""
        splitter = self.spec.document
        if splitter is None:
            return False
        try:
            doc = msgspec.json.decode(data.removeprefix(BOM), type=Raw)
        except msgspec.DecodeError:
            if not self.spec.text:
                return False
            doc = Raw(msgspec.json.encode(data.removeprefix(BOM).decode("utf-8", "replace")))
        pairs = list(splitter(doc))
        if not pairs:
            return False
        for rtype, record in pairs:
            self.add(record, rtype)
        return True

    def add_spread(self, data: bytes) -> bool:
        """Add the records of a transcript whose records are pretty-printed, one after another.

        False (nothing added) if *data* is not a sequence of JSON objects.
        """
        try:
            text = data.removeprefix(BOM).decode()
        except UnicodeDecodeError:
            return False
        decoder = json.JSONDecoder()
        records: list[Obj] = []
        pos, end = 0, len(text)
        while True:
            while pos < end and text[pos] in " \t\r\n":
                pos += 1
            if pos == end:
                break
            try:
                _, stop = decoder.raw_decode(text, pos)
            except ValueError:
                return False
            record = as_obj(Raw(text[pos:stop].encode()))
            if record is None:
                return False
            records.append(record)
            pos = stop
        for record in records:
            self.add(record)
        return bool(records)


# -- helpers for the harnesses' vocabularies ----------------------------------------


def prefixes(rules: dict[str, tuple[str, ...]]) -> Callable[[str, str], str | None]:
    """A normalizer: values of a path that start with one of its prefixes are not vocabulary."""

    def normalize(path: str, value: str) -> str | None:
        for prefix in rules.get(path, ()):
            if value.startswith(prefix):
                return None
        return value

    return normalize


def typed_by(base: str, field: str) -> Callable[[Obj], str]:
    """Record type ``type``, refined to ``type/<field>`` for records of type *base*."""

    def record_type(record: Obj) -> str:
        rtype = type_field(record)
        if rtype == base:
            sub = string_at(record, field)
            if sub:
                return f"{rtype}/{sub}"
        return rtype

    return record_type


def split_document(
    doc: Raw, top: str, arrays: dict[str, tuple[str, str]]
) -> Iterator[tuple[str, Obj]]:
    """The records of a document object: itself as *top*, and the elements of *arrays*.

    *arrays* maps an array key to ``(prefix, field)``: each element object is a
    record of type ``prefix + element[field]``.
    """
    obj = as_obj(doc)
    if obj is None:
        return
    yield top, obj
    for key, (prefix, name) in arrays.items():
        for rec in objects(obj.get(key)):
            sub = rec.get(name)
            yield prefix + ((as_str(sub) if sub is not None else None) or UNTYPED), rec


def read_file(path: str) -> bytes | None:
    """The bytes of the file at *path* (a UTF-8 BOM dropped), or ``None`` when it cannot be read."""
    try:
        with open(path, "rb") as f:
            return f.read().removeprefix(BOM)
    except OSError:
        return None
