"""`manage.py export_evidence [--since T] [--until T] [--format ndjson] [--output FILE]`: stream the evidence
records (SPEC §13.1) as NDJSON, one record per line, oldest first, in constant memory."""
import argparse

from django.core.management.base import BaseCommand
from django.utils.dateparse import parse_date, parse_datetime

from governance.api.views import as_utc
from governance.evidence import export


def moment(value: str):
    """An ISO 8601 date-time, or a date (its midnight, UTC)."""
    try:
        parsed = parse_datetime(value)
        if parsed is None and parse_date(value) is not None:
            parsed = parse_datetime(value + "T00:00:00+00:00")
    except ValueError:
        parsed = None
    if parsed is None:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 date or date-time: {value!r}")
    return as_utc(parsed)


class Command(BaseCommand):
    help = "Write evidence records as NDJSON (one JSON object per line), oldest first, streamed."

    def add_arguments(self, parser):
        parser.add_argument("--since", type=moment, default=None, help="records at or after this date(-time)")
        parser.add_argument("--until", type=moment, default=None, help="records before this date(-time)")
        parser.add_argument("--format", choices=["ndjson"], default="ndjson", help="ndjson (the only format)")
        parser.add_argument("--output", default=None, help="write to this file instead of stdout")

    def handle(self, *args, since, until, output, **options):
        lines = export.ndjson_lines(export.selected(since=since, until=until))
        if output:
            with open(output, "w", encoding="utf-8") as stream:
                stream.writelines(lines)
        else:
            for line in lines:
                self.stdout.write(line, ending="")
