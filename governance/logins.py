"""django-axes' database handler, configured for SPEC §11.4's two counts (AXES_HANDLER).

Axes counts failures for each entry of AXES_LOCKOUT_PARAMETERS and compares the largest with
one AXES_FAILURE_LIMIT. Gavel needs two limits — a user name from one address (10) and an
address alone (50) — and a success that clears only the signed-in user name's count, never
the address's (else an attacker resets the count on an administrator by signing in as
themselves). Both are small overrides of axes' own handler; storage, the lock-out page, the
cool-off and the admin stay axes'.
"""
from django.conf import settings

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username
from axes.models import AccessAttempt


class GavelAxesHandler(AxesDatabaseHandler):
    def get_failures(self, request, credentials=None) -> int:
        """The count axes compares with AXES_FAILURE_LIMIT: the user name from this address as it is,
        the address alone scaled so that it reaches the limit at GAVEL_LOGIN_ADDRESS_FAILURE_LIMIT."""
        per_name, per_address = self.get_user_attempts(request, credentials)
        name_count = _failures(per_name)
        address_count = _failures(per_address)
        limit = settings.AXES_FAILURE_LIMIT
        address_limit = max(settings.GAVEL_LOGIN_ADDRESS_FAILURE_LIMIT, 1)
        return max(name_count, address_count * limit // address_limit)

    def reset_user_attempts(self, request, credentials=None) -> int:
        """After a success: only this user name's failures from this address go (AXES_RESET_ON_SUCCESS)."""
        username = get_client_username(request, credentials)
        count, _ = AccessAttempt.objects.filter(username=username, ip_address=request.axes_ip_address).delete()
        return count


def _failures(attempts) -> int:
    from django.db.models import Sum

    return attempts.aggregate(total=Sum("failures_since_start"))["total"] or 0
