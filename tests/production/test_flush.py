"""`flush` by DELETE on PostgreSQL (governance/postgresql/operations.py, decision 0055): every table is
empty afterwards, rows that reference each other included; sequences go on. A reset of the sequences
(`manage.py flush` asks for one by default) stays Django's TRUNCATE ... RESTART IDENTITY."""
import pytest
from django.core.management import call_command
from django.core.management.color import no_style
from django.db import connection

from governance.models import Configuration, Provider


@pytest.fixture
def postgresql(transactional_db):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (CI sets DATABASE_URL)")


def rows_in_every_table() -> dict[str, int]:
    tables = connection.introspection.django_table_names(only_existing=True, include_views=False)
    with connection.cursor() as cursor:
        counts = {}
        for table in tables:
            cursor.execute(f"SELECT count(*) FROM {connection.ops.quote_name(table)}")
            counts[table] = cursor.fetchone()[0]
    return counts


def test_flush_deletes_every_row_of_every_table_references_included(postgresql, admin_user, make_consumer):
    provider = Provider.objects.create(name="p", route="openai", api_base="http://127.0.0.1:9/v1")
    configuration = Configuration.objects.create(identifier="c", provider=provider, model="m")
    make_consumer("flush-app", [configuration])  # a consumer granted the configuration: a many-to-many row
    before = rows_in_every_table()
    assert before["governance_configuration"] == 1 and before["auth_user"] == 1
    assert sum(1 for count in before.values() if count) >= 5, before

    # As Django's TransactionTestCase flushes after each test: no sequence reset.
    call_command("flush", verbosity=0, interactive=False, reset_sequences=False, inhibit_post_migrate=True)

    assert {table: count for table, count in rows_in_every_table().items() if count} == {}


def test_the_statements_are_deletes_and_a_sequence_reset_stays_a_truncate(postgresql):
    tables = ["governance_provider", "governance_configuration"]
    assert connection.ops.sql_flush(no_style(), tables) == [
        'DELETE FROM "governance_provider";', 'DELETE FROM "governance_configuration";']
    reset = connection.ops.sql_flush(no_style(), tables, reset_sequences=True)
    assert len(reset) == 1 and reset[0].startswith("TRUNCATE") and "RESTART IDENTITY" in reset[0]
    assert connection.ops.sql_flush(no_style(), []) == []


def test_sequences_go_on_after_a_tests_flush_and_start_again_after_manage_py_flush(postgresql):
    first = Provider.objects.create(name="p1", route="openai", api_base="http://127.0.0.1:9/v1")
    call_command("flush", verbosity=0, interactive=False, reset_sequences=False, inhibit_post_migrate=True)
    second = Provider.objects.create(name="p2", route="openai", api_base="http://127.0.0.1:9/v1")
    assert second.pk > first.pk
    call_command("flush", verbosity=0, interactive=False, inhibit_post_migrate=True)  # the command's default
    assert Provider.objects.create(name="p3", route="openai", api_base="http://127.0.0.1:9/v1").pk == 1
