"""A callback URL carries no credentials (SPEC §9, §10): user info or a secret-named query value would be
stored and shown on the task; Gavel signs every callback instead, so such a URL is refused at submit."""
from django.utils.translation import gettext as _

from governance.errors import BadInput
from governance.screening.redaction import redact


def refuse_credentials(url: str, field: str) -> None:
    """400 naming `field` when `url` holds anything secret-shaped (user:password@, ?token=…, a key)."""
    if url and redact(url).findings:
        raise BadInput(_("The callback URL carries credentials."), code="invalid", fields={
            field: [_("Give a callback URL without user info, tokens or keys: Gavel signs every callback "
                      "(X-Gavel-Signature), check that instead.")]})
