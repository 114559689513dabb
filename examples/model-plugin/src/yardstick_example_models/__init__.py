"""Worked examples of Yardstick model plug-ins, one module per benchmark (docs/models.md).

Each model is a small fixed rule, written to show the plug-in interface: what a model is given,
how it loads its files once, and how it answers in its benchmark's prediction format. None of
them is a real model; their scores say so.
"""
