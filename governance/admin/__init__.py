"""The Django admin of the core: providers, configurations, examples, drafts, consumers, the governance log and tasks.

Django's autodiscovery imports this package; each module registers its records, in the order the
admin's index and URLs have always had. The list-as-text form fields are named here for the
snippet admin, which reuses them.
"""
from django.contrib import admin
from django.utils.translation import gettext_lazy as _

from governance.admin.forms import ListTextField, OrderedConfigurationsField, TagListField
from governance.admin.policy import ConfigurationAdmin, ProviderAdmin
from governance.admin.consumers import ConsumerAdmin
from governance.admin.log import GovernanceEventAdmin, TaskAdmin
from governance.admin.examples import PolicyExampleAdmin
from governance.admin.drafts import PolicyDraftAdmin
from governance.admin.mcp import McpServerAdmin, McpToolAdmin  # noqa: F401  (SPEC §14)
# The release pages (test, history) are views of their own.
from governance.policy import release_admin

__all__ = ["ConfigurationAdmin", "ConsumerAdmin", "GovernanceEventAdmin", "ListTextField",
           "OrderedConfigurationsField", "PolicyDraftAdmin", "PolicyExampleAdmin", "ProviderAdmin", "TagListField", "TaskAdmin", "release_admin"]

admin.site.site_header = _("Gavel administration")
admin.site.site_title = _("Gavel")
admin.site.index_title = _("Policy and governance")
