"""Benchmarks (`make bench` → docs/benchmarks.md) and reliability runs (`make reliability` →
docs/reliability.md). Everything here talks to 127.0.0.1 only and every loop is bounded.
"""
