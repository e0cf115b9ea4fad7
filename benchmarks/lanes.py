"""What the consumers' lane (governance/lanes.py) saves a JSON call: CPU per screening with the lane's
middleware against the same screening through Django's own middleware classes (issue 42: a device that
leans on a framework's internals stays only if it pays at least 10 % of a call).

Run: .venv/bin/python benchmarks/lanes.py [--calls N] [--rounds R]   (under a minute)

Two test clients in one process, one whose handler was built with the MIDDLEWARE of governance/settings.py
(the lane: whitenoise, the user and the messages passed by on JSON paths; the CSP header built once) and
one built with the same list naming Django's, whitenoise's and django-csp's own classes. Both POST the same
screening (a 2 KB text, a term list of 1,000 terms that match nothing) on a fresh in-memory SQLite database;
the two take turns call by call and each call's CPU is this process's `time.process_time()`, so a
neighbour's load falls on both alike. Printed: CPU ms per call of each, per round, and the share of a call
the lane saves (median over rounds, with the spread).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.inprocess import consumer_client, setup_django  # noqa: E402

PLAIN = {
    "governance.lanes.ContentSecurityPolicy": "csp.middleware.CSPMiddleware",
    "governance.lanes.StaticFiles": "whitenoise.middleware.WhiteNoiseMiddleware",
    "governance.lanes.Authentication": "django.contrib.auth.middleware.AuthenticationMiddleware",
    "governance.lanes.Messages": "django.contrib.messages.middleware.MessageMiddleware",
}
TEXT = " ".join(["The harbour wakes before the town does, gulls first, then the ferry engines."] * 27)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300, help="calls of each per round (default 300)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds (default 5)")
    args = parser.parse_args()
    setup_django("gavel-lanes-", in_memory=True)
    from django.conf import settings
    from django.test import Client, override_settings

    from governance.models import Configuration, Provider
    from termlists.models import TermList

    provider = Provider.objects.create(name="local", route="openai", api_base="http://127.0.0.1:9/v1",
                                       trust_zone="local")
    configuration = Configuration.objects.create(identifier="newsletter", provider=provider, model="writer")
    terms = TermList.objects.create(name="forbidden", forbidden="\n".join(f"zarquon{i}" for i in range(1000)))
    terms.configurations.add(configuration)
    body = {"text": TEXT, "configuration": "newsletter"}
    plain_list = [PLAIN.get(name, name) for name in settings.MIDDLEWARE]
    assert plain_list != list(settings.MIDDLEWARE)

    def caller(client):
        def call():
            response = client.post("/api/v1/screenings", body, content_type="application/json")
            assert response.status_code == 200 and response.json()["outcome"] == "allowed", response.content
        return call

    lane_client = consumer_client([configuration])
    lane = caller(lane_client)
    lane()  # its handler's middleware is loaded now, from the settings as they are
    with override_settings(MIDDLEWARE=plain_list):
        plain = caller(Client(**lane_client.defaults))  # the same consumer's token
        plain()  # its handler's middleware is loaded inside the override: Django's own classes
    rows = {"lane": lane, "plain": plain}
    for _ in range(30):
        lane(), plain()
    rounds = []
    for _round in range(args.rounds):
        spent = dict.fromkeys(rows, 0.0)
        for index in range(args.calls):
            for name in (("lane", "plain") if index % 2 == 0 else ("plain", "lane")):
                before = time.process_time()
                rows[name]()
                spent[name] += time.process_time() - before
        rounds.append({name: spent[name] * 1000 / args.calls for name in rows})
    print(f"POST /api/v1/screenings, CPU ms per call, {args.calls} calls of each per round, taking turns")
    print(f"{'round':>5} {'lane':>8} {'plain':>8} {'saved':>7}")
    saved = []
    for number, row in enumerate(rounds, 1):
        share = 1 - row["lane"] / row["plain"]
        saved.append(share)
        print(f"{number:>5} {row['lane']:>8.3f} {row['plain']:>8.3f} {share:>6.1%}")
    print(f"the lane saves {statistics.median(saved):.1%} of a screening's CPU (median of {len(saved)} rounds; "
          f"{min(saved):.1%} to {max(saved):.1%}); the bar to keep it: 10 %")


if __name__ == "__main__":
    main()
