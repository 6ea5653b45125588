"""When a failed delivery is tried again, and when an endpoint counts as down."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Retries:
    """Exponential backoff: `first_delay` seconds after the first failure (the sweep runs every
    THREADLESS_WEBHOOK_SWEEP_SECONDS, so the first retry comes within about 30 s), times `factor`
    after each further one, at most `max_delay`; one last attempt lands `give_up_after` seconds
    after the first, then the delivery fails. An endpoint whose every delivery has failed for
    `disable_after` seconds is disabled."""

    first_delay: float = 10.0
    factor: float = 4.0
    max_delay: float = 6 * 3600.0
    give_up_after: float = 24 * 3600.0
    disable_after: float = 24 * 3600.0
    timeout_seconds: float = 5.0

    def delay(self, attempts: int) -> float:
        """Seconds to wait after the `attempts`-th attempt failed."""
        return min(self.first_delay * self.factor ** max(attempts - 1, 0), self.max_delay)


RETRIES = Retries()
