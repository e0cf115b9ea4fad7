"""The policy file's format (policy-example.yaml, normative): its sections and keys, in the example's order."""
import re

SECTIONS = ("providers", "mcp_servers", "configurations", "snippets", "term_lists", "pattern_rules", "examples")
# The key that names a record of each section; import upserts by it.
NAME_KEYS = {
    "providers": "name",
    "mcp_servers": "name",
    "configurations": "identifier",
    "snippets": "identifier",
    "term_lists": "name",
    "pattern_rules": "identifier",
    "examples": "name",
}
PROVIDER_KEYS = (
    "name", "kind", "route", "api_base", "api_key_env", "trust_zone", "timeout",
    "max_concurrency", "requests_per_minute", "tokens_per_minute",
    "price_per_mtok_in", "price_per_mtok_out",
)
CONFIGURATION_KEYS = (
    "identifier", "provider", "model", "system_prompt", "temperature", "max_tokens", "timeout",
    "fallbacks", "budget", "context_tags", "read_tools", "escalation", "rules",
    "mcp_servers", "approve_tools", "deny_tools", "mcp_results",  # the MCP gateway (SPEC §14)
)
MCP_SERVER_KEYS = ("name", "url", "headers_env", "trust_zone", "timeout")
BUDGET_KEYS = ("daily_requests", "daily_tokens", "daily_cost")
RULES_KEYS = ("mode", "tags", "judges", "default", "min_confidence")
SNIPPET_KEYS = ("identifier", "name", "tags", "sort", "data_class", "is_active", "hidden", "body")
TERM_LIST_KEYS = ("name", "configurations", "forbidden", "required", "site", "language", "mode", "message", "is_active")
PATTERN_RULE_KEYS = (
    "identifier", "statement", "tags", "severity", "violation_pattern", "satisfied_pattern",
    "no_verdict_reason", "wrong_samples", "correct_samples", "source", "is_active",
)

EXAMPLE_KEYS = (
    "name", "configuration", "also", "kind", "site", "language", "format", "text", "tool_calls", "expect", "note",
    "kept_by", "kept_at", "from_task",
)
EXPECT_KEYS = ("outcome", "findings", "absent")
# Every key a finding may carry; which ones a check takes is examples.CHECK_KEYS.
FINDING_KEYS = ("check", "list", "term", "snippet", "rule")

# Where a model field lives in the document, for fields whose path is not their own name.
CONFIGURATION_PATHS = {
    "budget_daily_requests": "budget.daily_requests",
    "budget_daily_tokens": "budget.daily_tokens",
    "budget_daily_cost": "budget.daily_cost",
    "rule_mode": "rules.mode",
    "rule_tags": "rules.tags",
    "rule_judges": "rules.judges",
    "rule_default": "rules.default",
}

# A name an environment variable can have (a key pasted here would not look like this).
ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# The same shape the REST API accepts for a call's language (BCP 47-ish: de, de-AT, zh-Hant).
LANGUAGE_RE = re.compile(r"^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$")

CHANGE_REASON = "policy import"
# Document paths of the relations, which are rows of their own rather than fields of the configuration.
LINK_KEYS = {"fallbacks", "rules.judges"}
