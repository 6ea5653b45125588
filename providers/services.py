"""The operator's runtime egress allow list: add and remove entries.

Every change is written to Django's admin log (`LogEntry`: who, when, what) in the same
transaction, and this process reads the list again at once; other processes within
`providers.egress.RUNTIME_LIST_SECONDS`. Only the console's operator page calls these.
"""

from __future__ import annotations

import ipaddress

from django.contrib.admin.models import ADDITION, DELETION, LogEntry
from django.db import transaction

from common.errors import InvalidRequest, NotFound
from providers.egress import allow_entry_refusal, egress_caches_forget
from providers.models import EgressAllowEntry


def _normal_entry(value: str) -> str:
    value = value.strip()
    try:
        network = ipaddress.ip_network(value.strip("[]"), strict=False)
    except ValueError:
        return value.lower().rstrip(".")
    return str(network.network_address) if network.num_addresses == 1 else str(network)


def _audit(*, actor, entry: EgressAllowEntry, flag: int, message: str) -> None:
    LogEntry.objects.log_actions(actor.pk, [entry], flag, change_message=message, single_object=True)


def egress_allow_add(*, value: str, note: str = "", actor) -> EgressAllowEntry:
    """Allow outbound calls to a host name, an address or a CIDR although it is not public."""
    refusal = allow_entry_refusal(value)
    if refusal:
        raise InvalidRequest(f"value: {refusal}")
    value = _normal_entry(value)
    if EgressAllowEntry.objects.filter(value=value).exists():
        raise InvalidRequest(f"value: {value} is already on the list.")
    with transaction.atomic():
        entry = EgressAllowEntry.objects.create(value=value, note=note.strip()[:200], created_by=actor)
        _audit(actor=actor, entry=entry, flag=ADDITION, message=f"Allowed egress to {value}.")
    egress_caches_forget()
    return entry


def egress_allow_remove(*, entry_id: int, actor) -> str:
    """Take an entry off the runtime list; the value removed."""
    with transaction.atomic():
        entry = EgressAllowEntry.objects.select_for_update().filter(pk=entry_id).first()
        if entry is None:
            raise NotFound("No such egress allow-list entry.")
        _audit(actor=actor, entry=entry, flag=DELETION, message=f"Stopped allowing egress to {entry.value}.")
        entry.delete()
    egress_caches_forget()
    return entry.value
