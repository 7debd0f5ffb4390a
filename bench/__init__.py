"""Benchmarks: scripts that print figures and write them to bench/results/<name>.json.

Run one with `python -m bench.<name> [--quick]`. They are not tests: timings on a
shared machine are noisy, so every figure is a median over repeats, and every
comparison is measured side by side in one run.
"""
