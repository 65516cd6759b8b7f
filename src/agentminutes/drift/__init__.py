"""Format drift: compare transcripts' vocabulary with baselines shipped in the package.

* :func:`scan` checks one transcript: strict parse with line accounting, then
  its vocabulary (record types, key paths per record type, discriminator
  values) against the baseline for its harness. The result is a
  :class:`ScanReport`; ``agentminutes drift scan`` prints it.
* :func:`build_baseline` makes a :class:`Baseline` from transcripts;
  ``scripts/build_drift_baselines.py`` runs it over ``fixtures/<harness>/`` and
  writes each harness's baseline where its description says
  (``agentminutes/harness/<name>/baselines/<harness>.json``).
* Each harness's rules (how its records are typed, which values are
  vocabulary) are a :class:`Vocabulary` declared in its folder
  (``harness/<name>/drift.py``); :data:`VOCABULARIES` is a view of the registry.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from agentminutes.drift._baseline import (
    BASELINE_FORMAT,
    Baseline,
    Diff,
    FixtureInfo,
    RecordVocab,
    baseline_from_vocab,
    diff,
    encode_baseline,
    load_baseline,
    select_baseline,
    shipped_baselines,
)
from agentminutes.drift._harnesses import VOCABULARIES, vocabulary
from agentminutes.drift._scan import Category, Finding, ScanReport, read_vocab, scan, scan_command
from agentminutes.harness.drift_vocabulary import Vocab, VocabError, Vocabulary

__all__ = (
    "BASELINE_FORMAT",
    "VOCABULARIES",
    "Baseline",
    "Category",
    "Diff",
    "Finding",
    "FixtureInfo",
    "RecordVocab",
    "ScanReport",
    "Vocab",
    "VocabError",
    "Vocabulary",
    "baseline_from_vocab",
    "build_baseline",
    "diff",
    "encode_baseline",
    "load_baseline",
    "read_vocab",
    "scan",
    "scan_command",
    "select_baseline",
    "shipped_baselines",
    "vocabulary",
)


def build_baseline(
    harness: str,
    paths: Iterable[str | os.PathLike[str]],
    *,
    version: str = "",
    fixtures: Iterable[FixtureInfo] = (),
) -> Baseline:
    """The baseline of *harness* made from the transcripts at *paths*, together.

    Raises:
        KeyError: drift scanning does not cover *harness*.
        VocabError: a transcript is neither JSON lines nor a document the harness's rules split.
    """
    spec = vocabulary(harness)
    if spec is None:
        raise KeyError(harness)
    vocab = Vocab(spec)
    for path in paths:
        read_vocab(os.fspath(path), vocab)
    return baseline_from_vocab(vocab, version=version, fixtures=fixtures)
