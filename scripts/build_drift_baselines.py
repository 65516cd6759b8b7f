#!/usr/bin/env python3
"""Build the drift baselines shipped in the package from the project's fixtures.

Every transcript under ``fixtures/<harness>/`` (``.jsonl``, ``.json``, ``.log``, ``.md``;
not ``.meta.json`` sidecars) of a harness that drift scanning covers feeds that
harness's baseline, where its description says
(``src/agentminutes/harness/<name>/baselines/<harness>.json``). Each
fixture must be detected as its folder's harness and parse strictly; the
baseline records which fixtures, of which harness versions, fed it. Absorbing a
format change is: add a transcript of the new release to ``fixtures/``, run this
script, commit both.

    python scripts/build_drift_baselines.py           # rewrite every baseline
    python scripts/build_drift_baselines.py --check   # exit 1 if any is out of date
    python scripts/build_drift_baselines.py --era claude-code@2.0.76

An *era* baseline, ``<harness>@<version>.json``, holds only the fixtures up to
that version; a transcript is compared with the baseline generated from the
nearest version at or below its own. Era files already present are rebuilt
on every run.

Fixtures alone are too few: a real home uses built-in tools and result shapes
no fixture happens to show, and a scan that flags them cries wolf. Two more
sources feed the main baseline (not the era files):

* the vocabulary each harness's description declares as known
  (``Vocabulary.known``: its built-in tool names, from its source and docs);
* a corpus of real transcripts, read once with ``--corpus DIR`` (a folder of
  ``<harness>/`` folders, each with its ``MANIFEST.tsv``): the vocabulary of every
  listed transcript that is detected as its harness and parses strictly is kept in
  ``scripts/drift_corpus/<harness>.json`` (key counts and values, no text), so
  later runs and the tests need neither the corpus nor its files.

The drift samples (``*schema_drift*``: transcripts made to show drift) feed
no baseline, from the fixtures or the corpus.

    python scripts/build_drift_baselines.py --corpus ../shared/corpus
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import msgspec

from agentminutes.drift import (
    VOCABULARIES,
    Baseline,
    FixtureInfo,
    Vocab,
    VocabError,
    baseline_from_vocab,
    encode_baseline,
    read_vocab,
)
from agentminutes.drift._baseline import baseline_place
from agentminutes.errors import AgentminutesError
from agentminutes.harness import ParseOptions, version_newer
from agentminutes.harness.drift_vocabulary import RecordStats
from agentminutes.pipeline.conversion import Conversion, open_sync_chunks
from agentminutes.pipeline.detect import detect
from agentminutes.pipeline.sync import sync_feeds
from agentminutes.schema import EventKind

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SRC = ROOT / "src"

SUFFIXES = (".jsonl", ".json", ".log", ".md")
#: Where the corpus's vocabulary is kept, one file per harness.
CORPUS_VOCAB = ROOT / "scripts" / "drift_corpus"


def is_drift_sample(path: Path) -> bool:
    """A transcript made to show drift (``schema_drift.jsonl``): it feeds no baseline."""
    return "schema_drift" in path.name


class CorpusTypes(msgspec.Struct, kw_only=True):
    """One record type's vocabulary in the corpus: records, key counts, values."""

    records: int
    keys: dict[str, int]
    values: dict[str, list[str]]


class CorpusVocab(msgspec.Struct, kw_only=True):
    """The vocabulary of a harness's corpus transcripts, as ``--corpus`` kept it."""

    harness: str
    transcripts: list[FixtureInfo]
    types: dict[str, CorpusTypes]


class BuildError(Exception):
    """A fixture that cannot feed a baseline."""


def lab_sources(harness: str) -> list[Path]:
    """The sources the lab recorded of *harness* (``fixtures/lab/<harness>/<version>/<scenario>/``,
    as each recording's ``recording.json`` names them): today's releases, in the baseline too."""
    found = []
    for note in sorted((FIXTURES / "lab" / harness).glob("*/*/recording.json")):
        recording = json.loads(note.read_text())
        found.extend(note.parent / p for p in recording.get("sources", recording["transcripts"]))
    return found


def fixture_files(harness: str) -> list[Path]:
    """The transcript fixtures of *harness*, sorted (for a database or folder format: its sources)."""
    base = FIXTURES / harness
    if not base.is_dir():
        return []
    lab = lab_sources(harness)
    if VOCABULARIES[harness].source is not None:
        # A database's lab recordings feed it; the Cline CLI's 3.x session documents are no
        # task folder, which is what its drift source reads.
        return source_fixtures(base) + [p for p in lab if p.suffix == ".db"]
    return lab + sorted(
        p
        for p in base.rglob("*")
        if p.is_file()
        and p.suffix in SUFFIXES
        and not p.name.endswith(".meta.json")
        and p.name != "journal.jsonl"  # a Claude Code workflow run's journal: a sidecar
        and not is_drift_sample(p)
    )


def source_fixtures(base: Path) -> list[Path]:
    """Databases, storage trees and task folders under *base*, each once."""
    found: set[Path] = set()
    for p in base.rglob("*"):
        if p.suffix == ".db" or (p.name == "storage" and p.is_dir()):
            found.add(p)
        elif p.name in ("ui_messages.json", "api_conversation_history.json"):
            found.add(p.parent)
    return sorted(found)


def source_version(path: Path, harness: str) -> str:
    """The newest version the sessions of a database or folder record (each parsed strictly)."""
    found, _ = detect(path)
    if found != harness:
        raise BuildError(f"{path}: detected as {found}, not {harness}")
    version = ""
    try:
        for batches, _skipped in sync_feeds(path, None, True, harness, ParseOptions()):
            for batch in batches:
                for ev in batch.events:
                    if ev.session_meta is not None and ev.session_meta.harness_version:
                        v = ev.session_meta.harness_version
                        if not version or version_newer(v, version):
                            version = v
    except Exception as exc:
        raise BuildError(f"{path}: does not parse strictly: {exc}") from None
    return version


def fixture_version(path: Path, harness: str) -> str:
    """The harness version *path* records, after checking it detects and parses as *harness*."""
    found, _ = detect(path)
    if found != harness:
        raise BuildError(f"{path}: detected as {found}, not {harness}")
    conv = Conversion(name=str(path), harness=harness, options=ParseOptions())
    version = ""
    try:
        for ev in conv.iter_events(open_sync_chunks(path)):
            if ev.kind == EventKind.SESSION_META and ev.session_meta is not None and not version:
                version = ev.session_meta.harness_version
    except Exception as exc:
        raise BuildError(f"{path}: does not parse strictly: {exc}") from None
    if not version and conv.adapter is not None:
        version = conv.adapter.version
    return version


def build(harness: str, until: str = "") -> Baseline:
    """The baseline of *harness* from its fixtures (only those up to version *until*, if given)."""
    vocab = Vocab(VOCABULARIES[harness])
    fixtures: list[FixtureInfo] = []
    newest = ""
    source = VOCABULARIES[harness].source
    for path in fixture_files(harness):
        if source is not None:
            version = source_version(path, harness)
        else:
            version = fixture_version(path, harness)
        if until and (not version or version_newer(version, until)):
            continue
        before = vocab.records
        if source is not None:
            for rtype, record in source(str(path)):
                vocab.add(record, rtype)
        else:
            try:
                read_vocab(str(path), vocab)
            except VocabError as exc:
                raise BuildError(f"{path}: {exc}") from None
        rel = path.relative_to(FIXTURES).as_posix()
        fixtures.append(FixtureInfo(path=rel, version=version, records=vocab.records - before))
        if version and (not newest or version_newer(version, newest)):
            newest = version
    if not fixtures:
        raise BuildError(f"no {harness} fixtures" + (f" up to version {until}" if until else ""))
    corpus: list[FixtureInfo] = []
    if not until:  # an era holds what the adapters were checked against up to then
        add_known(vocab)
        kept = load_corpus_vocab(harness)
        if kept is not None:
            add_corpus(vocab, kept)
            corpus = kept.transcripts
    baseline = baseline_from_vocab(vocab, version=newest, fixtures=fixtures)
    baseline.corpus = corpus or None
    return baseline


def add_known(vocab: Vocab) -> None:
    """The values the harness's vocabulary declares as known, on each record type that has
    the discriminator (a built-in tool no fixture called is no news)."""
    spec = vocab.spec
    for rtype, stats in vocab.types.items():
        for path in spec.paths(spec.discriminators, rtype):
            values = spec.known.get(path)
            if values:
                stats.values.setdefault(path, set()).update(values)


def add_corpus(vocab: Vocab, kept: CorpusVocab) -> None:
    """Fold the corpus's kept vocabulary into *vocab*, as if its records were read again."""
    for rtype, found in kept.types.items():
        stats = vocab.types.get(rtype)
        if stats is None:
            stats = vocab.types[rtype] = RecordStats()
        stats.records += found.records
        vocab.records += found.records
        for key, n in found.keys.items():
            stats.keys[key] = stats.keys.get(key, 0) + n
        for path, values in found.values.items():
            stats.values.setdefault(path, set()).update(values)


def load_corpus_vocab(harness: str) -> CorpusVocab | None:
    path = CORPUS_VOCAB / f"{harness}.json"
    if not path.is_file():
        return None
    return msgspec.json.decode(path.read_bytes(), type=CorpusVocab)


def read_corpus(corpus: Path) -> dict[Path, bytes]:
    """The corpus vocabulary files to write: for each harness, its transcripts' vocabulary.

    A transcript feeds it when its manifest lists it (not as a sidecar), it is no
    drift sample, it is detected as its folder's harness and parses strictly; the
    others are named on stderr and left out.
    """
    import csv

    files: dict[Path, bytes] = {}
    for harness, spec in VOCABULARIES.items():
        manifest = corpus / harness / "MANIFEST.tsv"
        if not manifest.is_file():
            continue
        with open(manifest, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f, delimiter="\t"))
        vocab = Vocab(spec)
        kept: list[FixtureInfo] = []
        if spec.source is not None:  # a database or a task folder: read whole, once
            for rel in sorted({str(Path(row["file"]).parent) for row in rows}):
                folder = corpus / harness / rel
                try:
                    version = source_version(folder, harness)
                except (BuildError, OSError, AgentminutesError) as exc:
                    print(
                        f"build_drift_baselines: corpus: left out {harness}/{rel}: {exc}",
                        file=sys.stderr,
                    )
                    continue
                before = vocab.records
                for rtype, record in spec.source(str(folder)):
                    vocab.add(record, rtype)
                kept.append(
                    FixtureInfo(
                        path=f"{harness}/{rel}", version=version, records=vocab.records - before
                    )
                )
            rows = []
        for row in rows:
            path = corpus / harness / row["file"]
            kind = row.get("genuine_or_synthetic", "")
            if kind == "sidecar" or is_drift_sample(path) or path.suffix not in SUFFIXES:
                continue
            try:
                version = fixture_version(path, harness)
                before = vocab.records
                read_vocab(str(path), vocab)
            except (BuildError, VocabError, OSError) as exc:
                print(
                    f"build_drift_baselines: corpus: left out {harness}/{row['file']}: {exc}",
                    file=sys.stderr,
                )
                continue
            kept.append(
                FixtureInfo(
                    path=f"{harness}/{row['file']}", version=version, records=vocab.records - before
                )
            )
        if not kept:
            continue
        types = {
            rtype: CorpusTypes(
                records=stats.records,
                keys=dict(sorted(stats.keys.items())),
                values={p: sorted(v) for p, v in sorted(stats.values.items())},
            )
            for rtype, stats in sorted(vocab.types.items())
        }
        data = CorpusVocab(harness=harness, transcripts=kept, types=types)
        files[CORPUS_VOCAB / f"{harness}.json"] = (
            msgspec.json.format(msgspec.json.encode(data), indent=2) + b"\n"
        )
    return files


def out_folder(harness: str) -> Path:
    """The folder of *harness*'s baselines (its description's ``baseline``, in the source tree)."""
    place = baseline_place(harness)
    if place is None:
        raise BuildError(f"{harness}: its description names no baseline")
    package, folder, _ = place
    return SRC.joinpath(*package.split("."), folder)


def _file(harness: str, era: str = "") -> Path:
    place = baseline_place(harness)
    assert place is not None
    return out_folder(harness) / f"{place[2]}{'@' + era if era else ''}.json"


def planned(eras: list[str]) -> dict[Path, bytes]:
    """Every baseline file to write, by path: one per harness, plus the era files."""
    files: dict[Path, bytes] = {}
    for harness in VOCABULARIES:
        if fixture_files(harness):
            files[_file(harness)] = encode_baseline(build(harness))
    wanted = set(eras)
    for harness in VOCABULARIES:
        folder = out_folder(harness)
        if folder.is_dir():
            wanted.update(p.stem for p in folder.glob("*@*.json"))
    for era in sorted(wanted):
        harness, _, until = era.partition("@")
        if harness not in VOCABULARIES or not until:
            raise BuildError(
                f"{era}: want HARNESS@VERSION with HARNESS one of {sorted(VOCABULARIES)}"
            )
        files[_file(harness, until)] = encode_baseline(build(harness, until))
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a baseline is out of date")
    parser.add_argument(
        "--era", action="append", default=[], metavar="HARNESS@VERSION", help="add an era baseline"
    )
    parser.add_argument(
        "--corpus",
        type=Path,
        metavar="DIR",
        help="read a corpus of real transcripts (DIR/<harness>/MANIFEST.tsv) into "
        "scripts/drift_corpus/ first",
    )
    args = parser.parse_args(argv)
    if args.corpus is not None and not args.check:
        CORPUS_VOCAB.mkdir(exist_ok=True)
        for path, data in read_corpus(args.corpus).items():
            path.write_bytes(data)
            print(f"{path.relative_to(ROOT)}: written")
    try:
        files = planned(args.era)
    except BuildError as exc:
        print(f"build_drift_baselines: {exc}", file=sys.stderr)
        return 1
    stale = sorted(
        path for path, data in files.items() if not path.is_file() or path.read_bytes() != data
    )
    folders = {out_folder(h) for h in VOCABULARIES}
    extra = sorted(
        p for folder in folders if folder.is_dir() for p in folder.glob("*.json") if p not in files
    )
    if args.check:
        for path in stale:
            print(f"out of date: {path.relative_to(ROOT)}", file=sys.stderr)
        for path in extra:
            print(f"no fixtures for: {path.relative_to(ROOT)}", file=sys.stderr)
        return 1 if stale or extra else 0
    for path in stale:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(files[path])
    for path in extra:
        path.unlink()
    for path, data in files.items():
        types = len(msgspec.json.decode(data, type=Baseline).record_types)
        state = "written" if path in stale else "unchanged"
        print(f"{path.relative_to(ROOT)}: {state} ({types} record types)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
