"""``agentminutes drift scan``: check transcripts for format drift against the shipped baselines.

For each transcript: detect the harness; parse it strictly, accounting for
every line; read its vocabulary and compare it with the harness's baseline.
The report keeps the reference CLI's line shapes (``drift:``, ``note:``,
``info:``, ``clean:``), so users of both read it the same way; ``missing key``
findings are ours.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import IntEnum

from agentminutes.drift._baseline import Baseline, Diff, diff, load_baseline
from agentminutes.drift._harnesses import VOCABULARIES, vocabulary
from agentminutes.errors import AgentminutesError, ParseError, SourceError
from agentminutes.harness import (
    SNIFF_BYTES,
    ParseOptions,
    adapter_class,
    document_adapter_class,
    version_newer,
)
from agentminutes.harness.drift_vocabulary import Vocab, VocabError
from agentminutes.pipeline.conversion import Conversion, open_sync_chunks
from agentminutes.pipeline.sources import LineSplitter, open_error
from agentminutes.schema import EventKind

__all__ = ("Category", "Finding", "ScanReport", "read_vocab", "scan", "scan_command")


class Category(IntEnum):
    """How a scan came out, in rising severity (the worst of several files wins)."""

    CLEAN = 0
    INCONCLUSIVE = 1
    EXEC_ERROR = 2
    DRIFT = 3

    @property
    def exit_code(self) -> int:
        """The command's exit status: 0 clean, 1 drift, 2 inconclusive, 3 could not check."""
        return {0: 0, 1: 2, 2: 3, 3: 1}[self.value]


@dataclass(frozen=True, slots=True)
class Finding:
    """One line of a scan report.

    ``kind`` is one of ``undetected``, ``no_baseline``, ``parse_failure``,
    ``unaccounted_lines``, ``note``, ``vocabulary_stopped``, ``new_record_type``,
    ``new_key``, ``missing_key``, ``new_value``, ``unexercised``. ``drift`` is
    true for findings that make the transcript drifted.
    """

    kind: str
    text: str
    drift: bool = True
    record_type: str = ""
    path: str = ""
    value: str = ""


@dataclass
class ScanReport:
    """The outcome of scanning one transcript."""

    path: str
    harness: str = ""
    category: Category = Category.CLEAN
    findings: list[Finding] = field(default_factory=list)
    #: The version the baseline used was generated from.
    baseline_version: str = ""

    def add(self, finding: Finding, category: Category | None = None) -> None:
        self.findings.append(finding)
        worst = category if category is not None else Category.DRIFT if finding.drift else None
        if worst is not None and worst > self.category:
            self.category = worst

    def lines(self) -> list[str]:
        """The report as printed: a header naming the harness, then one line per finding."""
        if not self.harness:
            return [f"{self.path}: {f.text}" for f in self.findings[:1]]
        out = [f"{self.path}: {self.harness}"]
        out.extend(f"  {f.text}" for f in self.findings)
        if self.category is Category.CLEAN:
            out.append(f"  clean: matches the {self.harness} baseline")
        return out


def _read_head(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read(SNIFF_BYTES)


def _detect(path: str, head: bytes) -> str:
    from agentminutes.pipeline.detect import detect_source

    name, _ = detect_source(path, head)
    return name


def scan(path: str | os.PathLike[str]) -> ScanReport:
    """Scan one transcript file for drift.

    Raises:
        SourceError: the path cannot be read (missing, a directory, no permission).
    """
    name = os.fspath(path)
    if name == "-":
        raise SourceError("drift scan reads transcript files, not stdin")
    err = None if os.path.isdir(name) else open_error(name)
    report = ScanReport(name)
    if err is not None and os.path.isfile(name) and os.path.getsize(name) == 0:
        report.add(
            Finding("undetected", "could not detect the source harness"), Category.EXEC_ERROR
        )
        return report
    if err is not None:
        raise err
    if os.path.isdir(name):  # a folder source (a Cline task, an OpenCode storage tree), or an error
        from agentminutes.pipeline.detect import detect

        harness = detect(name)[0]
    else:
        harness = _detect_file(name)
    return _scan_detected(report, name, harness)


def _detect_file(name: str) -> str:
    try:
        head = _read_head(name)
        return _detect(name, head) if head.strip() else ""
    except OSError as exc:
        raise SourceError(f"{name}: {exc.strerror or exc}") from None
    except AgentminutesError:
        return ""


def _scan_detected(report: ScanReport, name: str, harness: str) -> ScanReport:
    if not harness:
        report.add(
            Finding("undetected", "could not detect the source harness"), Category.EXEC_ERROR
        )
        return report
    report.harness = harness
    spec = vocabulary(harness)
    if spec is None:
        covered = ", ".join(sorted(VOCABULARIES))
        report.add(
            Finding(
                "no_baseline",
                f"error: no drift baseline for {harness} (drift scan covers {covered})",
            ),
            Category.EXEC_ERROR,
        )
        return report

    vocab = Vocab(spec)
    stopped: VocabError | None = None
    if spec.source is not None:
        # Sessions in a database or a folder: records are accounted by the adapter's tests.
        covered_lines, version = _strict_parse_sessions(report, name)
        for rtype, record in spec.source(name):
            vocab.add(record, rtype)
    else:
        covered_lines, version = _strict_parse(report, name, harness)
        try:
            nonblank, document = read_vocab(name, vocab)
        except VocabError as exc:
            stopped = exc
        else:
            if covered_lines is not None and not document:
                _account(report, nonblank, covered_lines)
    baseline = load_baseline(harness, version)
    if baseline is None:
        report.add(
            Finding("no_baseline", f"error: no drift baseline for {harness} is installed"),
            Category.EXEC_ERROR,
        )
        return report
    report.baseline_version = baseline.generated_from_version
    if covered_lines is not None:  # a failed parse already says whether the version is newer
        cls = document_adapter_class(harness) or adapter_class(harness)
        _version_note(report, version, cls.last_checked, baseline)
    if stopped is not None:
        # The vocabulary is incomplete: comparing it would only mislead.
        report.add(Finding("vocabulary_stopped", f"vocabulary extraction stopped: {stopped}"))
        return report
    _report_diff(report, diff(baseline, vocab))
    return report


def _strict_parse_sessions(report: ScanReport, name: str) -> tuple[set[int] | None, str]:
    """Parse every session of a database or folder strictly; the newest version recorded."""
    from agentminutes.pipeline.sync import sync_feeds

    version = ""
    try:
        for batches, _skipped in sync_feeds(name, None, True, "auto", ParseOptions()):
            for batch in batches:
                for ev in batch.events:
                    meta = ev.session_meta
                    found = meta.harness_version if meta is not None else ""
                    if found and (not version or version_newer(found, version)):
                        version = found
    except AgentminutesError as exc:
        reason = str(exc).removeprefix(f"{name}: ")
        report.add(Finding("parse_failure", f"drift: strict parse failed: {reason}"))
        return None, ""
    return set(), version


def _strict_parse(report: ScanReport, name: str, harness: str) -> tuple[set[int] | None, str]:
    """Parse strictly; return the lines events and skips account for, and the version."""
    covered: set[int] = set()

    def on_skip(line: int, _rtype: str) -> None:
        covered.add(line)

    conv = Conversion(
        name=name, harness=harness, options=ParseOptions(), on_skip=on_skip, path=name
    )
    version = ""
    try:
        for ev in conv.iter_events(open_sync_chunks(name)):
            prov = ev.provenance
            if prov is not None:
                covered.update(range(prov.line, max(prov.end_line, prov.line) + 1))
            if ev.kind == EventKind.SESSION_META and ev.session_meta is not None and not version:
                version = ev.session_meta.harness_version
    except ParseError as exc:
        reason = str(exc.with_path(""))
        report.add(Finding("parse_failure", f"drift: strict parse failed: {reason}"))
        return None, exc.version
    except AgentminutesError as exc:
        reason = str(exc).removeprefix(f"{name}: ")
        report.add(Finding("parse_failure", f"drift: strict parse failed: {reason}"))
        return None, ""
    if conv.adapter is not None and not version:
        version = conv.adapter.version
    return covered, version


def read_vocab(path: str, vocab: Vocab) -> tuple[list[int], bool]:
    """Add the vocabulary of every record of *path* to *vocab*.

    Returns the non-blank line numbers and whether the transcript was read other
    than line by line, because its first record is not a JSON line: a whole JSON
    document (a legacy session file) split into records by the harness's rules,
    or records pretty-printed one after another.

    Raises:
        VocabError: a non-blank line is not a JSON object (and the file is not a
            document the harness's rules split).
    """
    before = vocab.records
    splitter = LineSplitter()
    nonblank: list[int] = []
    try:
        for chunk in open_sync_chunks(path):
            lines = splitter.push(chunk)
            if lines:
                nonblank.extend(vocab.add_lines(lines))
        nonblank.extend(vocab.add_lines(splitter.flush()))
    except VocabError:
        if vocab.records == before:
            with open(path, "rb") as f:
                data = f.read()
            if vocab.add_document(data) or vocab.add_spread(data):
                return [], True
            if data.strip().removeprefix(b"\xef\xbb\xbf").strip() == b"[]":
                return [], True  # an empty JSON array (a log with no entry): no records
        raise
    return nonblank, False


def _account(report: ScanReport, nonblank: list[int], covered: set[int]) -> None:
    missing = [n for n in nonblank if n not in covered]
    if missing:
        report.add(
            Finding(
                "unaccounted_lines",
                f"drift: {len(missing)} lines covered by neither an event nor a skip "
                f"(first: line {missing[0]})",
            )
        )


def _version_note(report: ScanReport, version: str, last: str, baseline: Baseline) -> None:
    if not version:
        return
    if last and version_newer(version, last):
        text = f"note: transcript version {version} is newer than last validated {last}"
    elif baseline.generated_from_version and version_newer(
        version, baseline.generated_from_version
    ):
        text = (
            f"note: transcript version {version} is newer than the baseline's newest "
            f"fixture ({baseline.generated_from_version})"
        )
    else:
        return
    report.add(Finding("note", text, drift=False))


def _report_diff(report: ScanReport, found: Diff) -> None:
    for rtype in found.new_types:
        report.add(
            Finding("new_record_type", f'drift: new record type "{rtype}"', record_type=rtype)
        )
    for rtype in sorted(found.new_keys):
        for key in found.new_keys[rtype]:
            report.add(
                Finding(
                    "new_key",
                    f'drift: record type "{rtype}" has new key "{key}"',
                    record_type=rtype,
                    path=key,
                )
            )
    for rtype in sorted(found.missing_keys):
        for key, lacking, records in found.missing_keys[rtype]:
            report.add(
                Finding(
                    "missing_key",
                    f'drift: record type "{rtype}" is missing key "{key}" '
                    f"(absent from {lacking} of {records} records)",
                    record_type=rtype,
                    path=key,
                )
            )
    for rtype in sorted(found.new_values):
        for path in sorted(found.new_values[rtype]):
            for value in found.new_values[rtype][path]:
                report.add(
                    Finding(
                        "new_value",
                        f'drift: record type "{rtype}" has new {path} value "{value}"',
                        record_type=rtype,
                        path=path,
                        value=value,
                    )
                )
    if found.unexercised:
        listed = " ".join(found.unexercised)
        report.add(
            Finding(
                "unexercised", f"info: baseline record types not exercised: [{listed}]", drift=False
            )
        )


def scan_command(paths: Sequence[str]) -> int:
    """Scan *paths* in order, printing each report; return the exit status of the worst one."""
    worst = Category.CLEAN
    out = sys.stdout
    for path in paths:
        report = scan(path)
        out.write("".join(line + "\n" for line in report.lines()))
        out.flush()
        worst = max(worst, report.category)
    return worst.exit_code
