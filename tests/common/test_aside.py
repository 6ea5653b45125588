"""common.aside: a wait lends the pool's place only when the pool offers one and no transaction is open."""

from __future__ import annotations

import contextlib

from django.db import transaction

from common.aside import LEND, waiting_aside


def _lending(lent: list):
    @contextlib.contextmanager
    def lend():
        lent.append("lent")
        yield

    return lend


def test_a_wait_lends_the_place_its_pool_offers():
    lent: list = []
    token = LEND.set(_lending(lent))
    try:
        with waiting_aside():
            pass
    finally:
        LEND.reset(token)
    with waiting_aside():  # no pool: a plain wait
        pass
    assert lent == ["lent"]


def test_a_wait_inside_a_transaction_keeps_its_place(transactional_db):
    lent: list = []
    token = LEND.set(_lending(lent))
    try:
        with transaction.atomic(), waiting_aside():
            pass
        with waiting_aside():
            pass
    finally:
        LEND.reset(token)
    assert lent == ["lent"]  # only the wait outside the transaction
