"""Benchmarks of the app, with their latest results in perf/results/.

Run each from the repository root as a module: `.venv/bin/python -m perf.<name> --help`.
"""
