"""A draft policy in force for one block, writing nothing (SPEC §12.2, §12.3): tests and replays under it.

The draft is imported for real inside a transaction that is always rolled back, so the screening
reads it through the same code as the live policy. While it stands, the policy version is a number
no real version can reach, so nothing this process caches under it is ever taken for a real version;
afterwards this process's caches are dropped and the real policy is read again.

Judges are never asked inside that transaction: on SQLite it holds the database's one write lock, and
a judge can take seconds (issue 25: other consumers' writes got 503 for 39 s). `under_draft` runs the work
in passes: each pass stops at the first judge a screening needs, the pass is rolled back, the judges are
asked with no transaction open, and the next pass takes their answers (judging.cache.Deferral).
"""
from __future__ import annotations

import copy
import secrets
from contextlib import contextmanager

from django.db import transaction

from governance.models import PolicyVersion
from governance.policy.importing import import_policy
from governance.runs.rehearsal import rehearsal
from governance.screening.service import forget_configurations
from judging import cache as verdict_cache

# Draft versions live above this; real versions count up from 1 and never get here.
DRAFT_VERSIONS = 2 ** 52


def forget_process_caches() -> None:
    from snippets.services import forget_compiled as forget_patterns
    from termlists.services import forget_compiled as forget_term_lists

    forget_patterns()
    forget_term_lists()
    forget_configurations()


@contextmanager
def draft_policy(document, *, prune: bool = True):
    """Yield the import report of `document` while it is the policy; roll everything back afterwards.

    Raises PolicyInvalid (nothing written) when the draft has errors.
    """
    try:
        # Verdicts the draft's judges give are kept, though the draft is rolled back: written after it.
        with verdict_cache.holding_writes(), transaction.atomic():
            report = import_policy(document, prune=prune)
            draft_version = DRAFT_VERSIONS + secrets.randbelow(2 ** 40)
            if not PolicyVersion.objects.filter(pk=1).update(value=draft_version):
                PolicyVersion.objects.create(pk=1, value=draft_version)
            forget_process_caches()
            try:
                yield report
            finally:
                transaction.set_rollback(True)
    finally:
        forget_process_caches()


# Passes of one run under a draft: each asks the judges the one before needed next (a judge's chain and a
# call's configurations, in order); a run that needs more reports the judges still wanted as not asked.
MAX_PASSES = 8


def under_draft(document, work, *, prune: bool = True, passes: int = MAX_PASSES):
    """`work()` while `document` is the policy, with its judges asked outside the draft's transaction.

    Returns (the import report, what `work` returned in its last pass). `work` must read and screen
    only: it may run several times. Raises PolicyInvalid (nothing written) when the draft has errors.
    """
    with verdict_cache.deferring() as deferral:
        number = 0
        while True:
            number += 1
            deferral.start_pass(final=number >= passes)  # the last pass wants none: it says "not asked"
            with draft_policy(copy.deepcopy(document), prune=prune) as report:  # each pass reads it afresh
                result = work()
            if not deferral.wanted:
                return report, result
            with rehearsal(draft=True):  # no usage, and no event the rolled-back draft would not keep
                deferral.ask()
