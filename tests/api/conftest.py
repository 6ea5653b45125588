"""The /v1 memory API tests' fixtures (memory_a, memory_b) and helpers live in tests/fixtures/api.py."""

from tests.fixtures.api import decorate, error_of, post, report

__all__ = ["decorate", "error_of", "post", "report"]
