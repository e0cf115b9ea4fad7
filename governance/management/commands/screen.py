"""`manage.py screen --configuration X FILE|-`: screen a text as POST /api/v1/screenings would (SPEC §11.3).

Exit status: 0 allowed, 1 allowed with hints, 2 blocked, 3 error (bad input, unknown configuration,
or anything unexpected: the error shape on stdout, the trace in the log).
"""
import json
import logging

from django.core.management.base import BaseCommand

from governance.screening import service as services
from governance.api.errors import field_messages
from governance.errors import GavelError
from governance.api.serializers import ScreeningRequestSerializer
from governance.management import read_input
from governance.middleware import error_body
from governance.screening.pipeline import KINDS

EXIT_CODES = {"allowed": 0, "allowed_with_hints": 1, "blocked": 2}
EXIT_ERROR = 3
ACTOR = "cli"

logger = logging.getLogger("gavel.cli")


class Command(BaseCommand):
    help = (
        "Screen a text (a file, or - for standard input) under a configuration's policy and print the "
        "screening JSON. Exit status: 0 allowed, 1 allowed with hints, 2 blocked, 3 error."
    )
    stealth_options = ("stdin",)

    def add_arguments(self, parser):
        parser.add_argument("file", help="the text to screen, or - for standard input")
        parser.add_argument("--configuration", required=True, metavar="X")
        parser.add_argument("--also", default="", metavar="Y,Z", help="further configurations (SPEC §6.7)")
        parser.add_argument("--format", default="text", choices=["text", "json"], dest="text_format")
        parser.add_argument("--kind", default="completion", choices=KINDS)
        parser.add_argument("--site", default="")
        parser.add_argument("--language", default="")

    def handle(self, *args, **options):
        try:
            self.screen(**options)
        except Exception:
            logger.exception("screen failed")
            self.fail(error_body("server_error", "Gavel could not complete the screening; it has been logged."))

    def screen(self, *, file, configuration, also, text_format, kind, site, language, **options):
        try:
            text = read_input(file, options.get("stdin"))
        except (OSError, UnicodeDecodeError) as exc:
            self.fail(error_body("unreadable", f"Cannot read {file}: {exc}"))
        data = {
            "text": text,
            "format": text_format,
            "configuration": configuration,
            "also": [name.strip() for name in also.split(",") if name.strip()],
            "kind": kind,
            "site": site,
            "language": language,
        }
        serializer = ScreeningRequestSerializer(data=data)
        if not serializer.is_valid():
            self.fail(error_body("invalid", "The input has invalid fields.", field_messages(serializer.errors)))
        try:
            screening, version = services.screen(
                serializer.validated_data, consumer=None, actor=ACTOR, reader_language=None
            )
        except GavelError as exc:
            self.fail(error_body(exc.code, exc.message, exc.fields))
        body = screening.as_response(version)
        self.stdout.write(json.dumps(body, ensure_ascii=False, indent=2, default=str))
        code = EXIT_CODES[body["outcome"]]
        if code:
            raise SystemExit(code)

    def fail(self, body: dict):
        self.stdout.write(json.dumps(body, ensure_ascii=False, indent=2, default=str))
        self.stderr.write(body["error"]["message"])
        raise SystemExit(EXIT_ERROR)
