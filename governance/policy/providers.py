"""The `providers:` section: where models are reached (name, kind, route, key variable, zone, prices)."""
from __future__ import annotations

from governance.models import Provider
from governance.policy.format import PROVIDER_KEYS
from governance.models.provider_keys import key_env_problem
from governance.policy.reading import Errors, Reader, Record, default_of, number, or_none


def export() -> list[dict]:
    """Every provider, by name."""
    return [
        {
            "name": p.name,
            "kind": p.kind,
            "route": p.route,
            "api_base": or_none(p.api_base),
            "api_key_env": or_none(p.api_key_env),
            "trust_zone": or_none(p.trust_zone),
            "timeout": p.timeout,
            "max_concurrency": p.max_concurrency,
            "requests_per_minute": p.requests_per_minute,
            "tokens_per_minute": p.tokens_per_minute,
            "price_per_mtok_in": number(p.price_per_mtok_in),
            "price_per_mtok_out": number(p.price_per_mtok_out),
        }
        for p in Provider.objects.order_by("name")
    ]


def read(errors: Errors, path: str, data: dict) -> Record:
    r = Reader(errors, path, data, PROVIDER_KEYS)
    name = r.string("name", required=True)
    api_key_env = r.string("api_key_env", nullable=True)
    if problem := key_env_problem(api_key_env):  # the one rule of governance/models/provider_keys.py
        r.fail("api_key_env", problem)
    values = {
        "name": name,
        "kind": r.choice("kind", Provider.Kind.values, default_of(Provider, "kind")),
        "route": r.string("route", required=True),
        "api_base": r.string("api_base", nullable=True),
        "api_key_env": api_key_env,
        "trust_zone": r.choice("trust_zone", [z for z, _label in Provider._meta.get_field("trust_zone").choices],
                               "", nullable=True),
        "timeout": r.integer("timeout", default_of(Provider, "timeout"), minimum=1),
        "max_concurrency": r.integer("max_concurrency", 0, minimum=0),
        "requests_per_minute": r.integer("requests_per_minute", 0, minimum=0),
        "tokens_per_minute": r.integer("tokens_per_minute", 0, minimum=0),
        "price_per_mtok_in": r.decimal("price_per_mtok_in", None, nullable=True),
        "price_per_mtok_out": r.decimal("price_per_mtok_out", None, nullable=True),
    }
    return Record("providers", path, name, values, paths={f: f for f in values}, failed=set(r.failed))
