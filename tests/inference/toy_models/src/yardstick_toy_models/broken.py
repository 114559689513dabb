"""A plug-in whose module cannot be imported (a dependency the machine lacks)."""

import yardstick_toy_models_missing_dependency  # noqa: F401

from inference.plugins import Model


class Anything(Model):
    benchmark = "dotcount"
    name = "anything"
