"""The Django admin of the core (being split into modules; see the next commit)."""
from governance.admin.forms import *  # noqa: F401,F403
from governance.admin.forms import ConfigurationAdmin, ListTextField, OrderedConfigurationsField, TagListField  # noqa: F401
