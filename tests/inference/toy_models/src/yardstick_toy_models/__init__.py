"""Toy model plug-ins for Yardstick's tests."""
