"""Gavel's core records, one module per record family. Field meanings follow SPEC §2; the admin-only
ones are named in `governance.records.permissions.ADMIN_ONLY_FIELDS`, never here."""
from governance.models.policy import (  # noqa: F401
    LINK_FIELDS, TRUST_ZONE_CHOICES, TRUST_ZONE_LABELS, Configuration, FallbackLink, JudgeLink, PolicyVersion,
    Provider, forget_links, normalise_tags, normalise_tool_names, one_bump, policy_edited, set_links, validate_tag_list,
    validate_tool_names, version_bumped,
)
from governance.models.consumers import (  # noqa: F401
    FREE_KINDS, GRANTABLE_KINDS, THROTTLE_RATE_RE, Consumer, ConsumerQuerySet, UserProfile, default_consumer_kinds,
)
from governance.models.log import GovernanceEvent, UsageDay  # noqa: F401
from governance.models.work import Batch, Task  # noqa: F401
from governance.models.release import PolicyExample, PolicyRevision  # noqa: F401
from governance.models.feedback import HintFeedback, finding_of  # noqa: F401
from governance.models.evidence import EvidenceRecord  # noqa: F401
from governance.models.drafts import PolicyDraft, PolicyDraftComment  # noqa: F401
from governance.models.mcp import McpServer, McpTool, headers_env_problems  # noqa: F401
