"""The waiting lane and the long-first order name files that exist (tests/ordering.py): a renamed file would
otherwise leave the lane silently and wait beside the other tests again."""
from types import SimpleNamespace

from tests.ordering import LONG_FIRST, TESTS, WAITING, path_of, rank


def test_every_file_the_order_names_exists():
    missing = [path for path in LONG_FIRST if not (TESTS / path).is_file()]
    assert not missing, f"tests/ordering.py names files that do not exist: {missing}"


def test_the_waiting_lane_goes_first_then_the_long_tests_then_the_rest():
    def item(path):
        return SimpleNamespace(path=TESTS / path)

    ranks = [rank(item(path)) for path in (*WAITING, "production/test_schema_fuzz.py", "test_readme.py",
                                           "test_docs.py")]
    assert ranks == sorted(ranks)
    assert max(rank(item(path)) for path in WAITING) < rank(item("production/test_schema_fuzz.py"))
    assert rank(item("test_docs.py")) == len(LONG_FIRST)
    assert path_of(SimpleNamespace(path=TESTS.parent / "manage.py")) is None
