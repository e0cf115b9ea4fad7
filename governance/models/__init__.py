"""Gavel's core records, one module per record family. Field meanings follow SPEC §2; the admin-only
ones are named in `governance.records.permissions.ADMIN_ONLY_FIELDS`, never here."""
from governance.models.policy import (  # noqa: F401
    Configuration, FallbackLink, JudgeLink, LINK_FIELDS, PolicyVersion, Provider, TRUST_ZONE_CHOICES, TRUST_ZONE_LABELS, forget_links, normalise_tags, set_links, validate_tag_list,
)
from governance.models.consumers import (  # noqa: F401
    Consumer, ConsumerQuerySet, FREE_KINDS, GRANTABLE_KINDS, THROTTLE_RATE_RE, UserProfile, default_consumer_kinds,
)
from governance.models.log import (  # noqa: F401
    GovernanceEvent, UsageDay,
)
from governance.models.work import (  # noqa: F401
    Batch, Task,
)
from governance.models.release import (  # noqa: F401
    PolicyExample, PolicyRevision,
)
from governance.models.feedback import (  # noqa: F401
    HintFeedback, finding_of,
)
from governance.models.evidence import (  # noqa: F401
    EvidenceRecord,
)
