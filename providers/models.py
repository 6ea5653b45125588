"""The operator's runtime egress allow list: hosts and CIDRs added in the console, read by
`providers.egress` together with THREADLESS_EGRESS_ALLOW from the environment.

Only operators (superusers) write it (console.egress_urls); no API route and no project key
reaches it, so a tenant can never loosen the policy.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class EgressAllowEntry(models.Model):
    value = models.CharField(max_length=255, unique=True)  # a host name, an address or a CIDR
    note = models.CharField(max_length=200, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["value"]

    def __str__(self) -> str:
        return self.value
