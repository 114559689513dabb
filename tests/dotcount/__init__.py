"""Dot count: a toy benchmark that lives only in the tests, to prove a benchmark is one plug-in.

An item is an image with a few dots and the question "How many dots?"; the answer is a number
written as text. Nothing outside tests/ names it: the tests register its spec, and every app
(import, scoring from the command line and the API, reports, test plans and trials) serves it
through the same lookups as the four real benchmarks. docs/adding-a-benchmark.md walks through it.
"""
