"""Projections of the event stream onto other ecosystems' formats.

- :mod:`~agentminutes.export.acp` — Agent Client Protocol ``session/update`` notifications.
"""
