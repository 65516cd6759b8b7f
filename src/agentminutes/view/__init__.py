"""Sessions a person can read: ``view`` (terminal, text, Markdown, HTML), ``compare``, and the
terminal tables of ``sessions`` and ``usage --by session``.

Everything here reads the normalized event stream (:mod:`agentminutes.api`) and the
summaries the other commands print (:class:`~agentminutes.schema.Stats`, the usage
report); nothing parses a transcript again. :mod:`agentminutes.view.model` folds a
session's events into turns, :mod:`agentminutes.view.terminal` lays them out with rich
(or as plain text and Markdown), :mod:`agentminutes.view.page` writes one self-contained
HTML page, :mod:`agentminutes.view.compare` sets runs side by side and
:mod:`agentminutes.view.listing` lays out the ``sessions`` table. The commands are in
:mod:`agentminutes.view.command`, imported only when one of them runs.
"""
