"""Yardstick: measure visual-reasoning benchmarks against humans."""

from yardstick.celery import app as celery_app

__all__ = ["celery_app"]
