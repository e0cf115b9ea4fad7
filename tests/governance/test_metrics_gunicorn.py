"""/metrics under gunicorn with two workers (SPEC §13.2): the counts of both workers, summed exactly, in
prometheus_client's multiprocess mode (docs/operations.md)."""
import json
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from prometheus_client.parser import text_string_to_metric_families

from governance.models import Configuration, Provider
from termlists.models import TermList
from tests.production.servers import gunicorn_on_test_database

TEXTS = {"allowed": "A plain sentence.", "allowed_with_hints": "A revolutionary sentence.",
         "blocked": "An Acme sentence."}
EACH = 6


def test_two_workers_counts_are_summed(transactional_db, make_consumer, tmp_path):
    provider = Provider.objects.create(name="metrics-provider", route="openai", api_base="http://127.0.0.1:9/v1")
    configuration = Configuration.objects.create(identifier="metered", provider=provider, model="m")
    TermList.objects.create(name="Hype", forbidden="revolutionary", mode="report").configurations.add(configuration)
    TermList.objects.create(name="Never", forbidden="Acme").configurations.add(configuration)
    _consumer, token = make_consumer("metered-app", [configuration], throttle_rate="100000/min")
    directory = tmp_path / "prometheus"
    directory.mkdir()

    def screen(text):
        request = urllib.request.Request(
            f"{url}/api/v1/screenings", data=json.dumps({"configuration": "metered", "text": text}).encode(),
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json", "Connection": "close"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())["outcome"]

    with gunicorn_on_test_database(tmp_path, workers=2, PROMETHEUS_MULTIPROC_DIR=str(directory)) as url:
        # Concurrent requests: a sync worker serves one at a time, so both workers take some.
        with ThreadPoolExecutor(max_workers=6) as pool:
            outcomes = list(pool.map(screen, [text for text in TEXTS.values() for _ in range(EACH)]))
        with urllib.request.urlopen(f"{url}/metrics", timeout=30) as response:
            shown = response.read().decode()
    assert sorted(outcomes) == sorted(outcome for outcome in TEXTS for _ in range(EACH))
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for family in text_string_to_metric_families(shown) for s in family.samples}
    for outcome in TEXTS:
        labels = tuple(sorted({"surface": "screening", "configuration": "metered", "outcome": outcome}.items()))
        assert samples[("gavel_runs_total", labels)] == EACH, outcome
    # Both workers counted runs: each wrote its own counter file.
    assert len(list(directory.glob("counter_*.db"))) == 2
