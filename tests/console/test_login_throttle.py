"""Console sign-in is throttled per account and per client address.

The attacker guesses passwords: after five wrong ones the account is locked (the sixth attempt
is refused even with the right password), while another account signing in from another
address still works; one address spraying many accounts is locked as well.
"""

from __future__ import annotations

import secrets

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

LOGIN = "/manage/login/"


class Attempts:
    """Counts live in the counter store (Redis under make test-services, which outlives a test):
    each test gets its own account names and addresses, so no other test's counts interfere."""

    def __init__(self):
        self.tag = secrets.token_hex(4)
        users = get_user_model()
        users.objects.create_user(self.name("target"), password="right-pass-12345", is_staff=True)
        users.objects.create_user(self.name("other"), password="other-pass-12345", is_staff=True)

    def name(self, who: str) -> str:
        return f"{who}-{self.tag}"

    def __call__(self, who: str, password: str, ip: str):
        return Client(REMOTE_ADDR=f"{ip}%{self.tag}").post(
            LOGIN, {"username": self.name(who), "password": password}
        )


@pytest.fixture
def attempt(db) -> Attempts:
    return Attempts()


def test_the_sixth_attempt_after_five_wrong_passwords_is_locked_out(attempt):
    for n in range(5):
        response = attempt("target", f"guess-{n}", "203.0.113.7")
        assert response.status_code == 200 and b"Please enter a correct" in response.content
    locked = attempt("target", "right-pass-12345", "203.0.113.7")
    assert locked.status_code == 429
    assert b"Too many failed sign-ins" in locked.content
    assert int(locked["Retry-After"]) > 0
    assert "_auth_user_id" not in locked.wsgi_request.session
    # The lock is on the account: the right password from another address is refused too.
    assert attempt("target", "right-pass-12345", "198.51.100.20").status_code == 429
    # A different account from another address still signs in.
    ok = attempt("other", "other-pass-12345", "198.51.100.20")
    assert ok.status_code == 302 and ok["Location"] == "/manage/"


def test_one_address_spraying_many_accounts_is_locked_out(attempt, settings):
    settings.THREADLESS_LOGIN_FAILURES_PER_IP = 8
    for n in range(8):
        assert attempt(f"nobody-{n}", "guess", "203.0.113.9").status_code == 200
    assert attempt("other", "other-pass-12345", "203.0.113.9").status_code == 429
    assert attempt("other", "other-pass-12345", "198.51.100.30").status_code == 302


def test_a_successful_sign_in_clears_the_accounts_failures(attempt):
    for n in range(4):
        attempt("target", f"guess-{n}", "203.0.113.7")
    assert attempt("target", "right-pass-12345", "203.0.113.7").status_code == 302
    for n in range(4):
        assert attempt("target", f"again-{n}", "203.0.113.7").status_code == 200
    assert attempt("target", "right-pass-12345", "203.0.113.7").status_code == 302


def test_a_lookalike_spelling_of_a_locked_name_counts_against_the_same_account(attempt):
    # `ｍallory` (fullwidth m) and upper case normalise to the same account as sign-in reads it.
    name = attempt.name("target")
    for n in range(5):
        attempt("target", f"guess-{n}", "203.0.113.7")
    fullwidth = chr(ord(name[0]) + 0xFEE0) + name[1:]  # 't' → 'ｔ'
    for spelling in (fullwidth, name.upper(), " " + name + " "):
        response = Client(REMOTE_ADDR=f"198.51.100.40%{attempt.tag}").post(
            LOGIN, {"username": spelling, "password": "right-pass-12345"}
        )
        assert response.status_code == 429, spelling
        assert "_auth_user_id" not in response.wsgi_request.session


def test_the_throttle_counts_in_the_counter_store_not_a_cache_table(attempt, settings):
    from common import counters
    from console import throttle

    assert "DatabaseCache" not in settings.CACHES["default"]["BACKEND"]
    attempt("target", "guess", "203.0.113.7")
    now, _ = throttle._windows()
    account, _address = throttle._bases(None, attempt.name("target"))
    assert counters.get_many([f"{account}:{now}"]) == [1]


def test_sign_in_works_where_migrate_was_the_only_schema_step(attempt):
    from django.db import connection

    assert not any("cache" in table for table in connection.introspection.table_names())
    assert attempt("target", "right-pass-12345", "203.0.113.7").status_code == 302
