"""What the tests and the benchmarks both need, and nothing else: real server processes
(`servers`) and the schemathesis run (`fuzz`). `tests/` and `bench/` import this, never each other.
"""
