"""`manage.py mcp_tools CONFIGURATION [--approve TOOL ...]`: the upstream MCP tools a configuration may offer,
each with its description and input schema in full, screened by the configuration's term lists and pattern
rules; `--approve` pins the named tools as they are listed now (SPEC §14, docs/mcp.md)."""
import json

from django.core.management.base import BaseCommand, CommandError

from governance.models import Configuration
from governance.protocols.mcp import tools
from governance.protocols.mcp.upstream import UpstreamError

STATES = {"approved": "approved", "not_approved": "NOT APPROVED (not offered)",
          "changed": "CHANGED since approval (withheld)", "denied": "denied by the configuration",
          "gone": "no longer listed by its server"}


class Command(BaseCommand):
    help = "List a configuration's upstream MCP tools, screened, and pin (approve) the ones named."

    def add_arguments(self, parser):
        parser.add_argument("configuration")
        parser.add_argument("--approve", action="append", default=[], metavar="TOOL",
                            help="Pin this tool's description and schema as listed now (repeat for more).")
        parser.add_argument("--by", default="manage.py mcp_tools", help="Who approves, as the pin records it.")

    def handle(self, *args, configuration, approve, by, **options):
        config = Configuration.objects.filter(identifier=configuration).first()
        if config is None:
            raise CommandError(f"No configuration named {configuration}.")
        if not config.mcp_servers:
            raise CommandError(f"{configuration} names no MCP server (mcp_servers).")
        try:
            reports = tools.report(config)
        except UpstreamError as exc:
            raise CommandError(str(exc))
        by_name = {r.tool.name: r for r in reports}
        unknown = [name for name in approve if name not in by_name]
        if unknown:
            raise CommandError(f"No tool named {', '.join(unknown)} on the servers of {configuration}.")
        for name in approve:
            try:
                tools.approve(by_name[name].tool, actor=by)
            except tools.ApprovalRefused as exc:
                raise CommandError(str(exc))
        if approve:
            reports = tools.report(config)
        for r in reports:
            self.stdout.write(self.style.MIGRATE_HEADING(f"{r.tool.name}  ({r.server.name}, {r.server.trust_zone})"))
            self.stdout.write(f"  state: {STATES[r.state]}")
            self.stdout.write("  description:")
            for line in (r.tool.description or "(none)").splitlines() or [""]:
                self.stdout.write(f"    {line}")
            self.stdout.write("  input schema:")
            for line in json.dumps(r.tool.input_schema, indent=2, sort_keys=True).splitlines():
                self.stdout.write(f"    {line}")
            if r.blocked:
                self.stdout.write(self.style.ERROR(f"  stopped by the policy: {r.blocked}"))
            for finding in r.findings:
                self.stdout.write(self.style.WARNING(f"  hint: {finding}"))
            if r.state == "changed":
                self.stdout.write("  change since approval:")
                for line in r.diff.splitlines():
                    self.stdout.write(f"    {line}")
        if approve:
            self.stdout.write(self.style.SUCCESS(f"Approved: {', '.join(approve)}."))
