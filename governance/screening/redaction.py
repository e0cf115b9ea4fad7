"""Secret redaction (SPEC §9): mask key- and token-shaped strings in finished text and live streams.
Pure standard library, no Django: `redact` for a whole text, `StreamRedactor` for a live stream (§8.1)."""
import re
from dataclasses import dataclass

from termlists import invisible

# What is masked, and the mask that replaces it. A Finding never holds the
# value; its offsets cover exactly the characters of the ORIGINAL text that the
# mask replaced.
#
#   kind               shape                                         becomes
#   url_userinfo       scheme://user:PASSWORD@host (also :\/\/)      user:***@host  (user kept, itself
#                                                                    checked for token shapes)
#   url_query_secret   ?api_key=VALUE / &token=VALUE / &amp;sig=…    ?api_key=***
#   openai_key         sk-…, sk-proj-…, sk-ant-… (20+ of [\w-])       sk-***
#   aws_access_key     AKIA / ASIA + 16 of [A-Z0-9]                  AKIA*** / ASIA***
#   github_token       ghp_/gho_/ghu_/ghs_/ghr_ + 36+ alnum,         ghp_*** … / github_pat_***
#                      github_pat_ + 22+ of [A-Za-z0-9_]
#   slack_token        xoxa-/xoxb-/xoxp-/xoxr-/xoxs- + 10+           xoxb-*** …
#   google_api_key     AIza + 35+ of [\w-]                           AIza***
#   jwt                eyJ… . … . …  (three base64url segments)      eyJ***
#   bearer             Bearer TOKEN (16+ chars, has a digit or       Bearer ***  (word and spacing kept)
#                      camelCase; "Bearer in mind" is prose)
#   gavel_token        gvl_… (consumer token), gvs_… (callback       gvl_*** / gvs_***
#                      secret), 20+ of [\w-]
#   gitlab_token       glpat- + 20+ of [\w-]                         glpat-***
#   stripe_key         sk_live_/rk_live_/sk_test_/rk_test_ + 16+     sk_live_*** …
#   slack_webhook      hooks.slack.com/services/… (also workflows,   hooks.slack.com/services/***
#                      triggers)
#   private_key        -----BEGIN … PRIVATE KEY----- body            header and END line kept, body ***
#                      [-----END … PRIVATE KEY-----]
#   assignment         password=… secret: … api_key = "…" (also      name and quotes kept, value ***
#                      db_password, aws_secret_access_key=,
#                      "SecretAccessKey": …; after ":" the value
#                      needs a digit or a symbol). AWS secret access
#                      keys are found this way: a bare 40-character
#                      run cannot be told from other base64.
#
# Hidden keys: `redact` also reads the text as a term list does (tags removed, entities
# decoded, invisible format characters such as U+200B dropped) and masks in the original the
# whole stretch that a key found only there spans ("sk-ab\u200bcd…" is masked, zero-width
# character included).
#
# Every mask ends in "***", which no shape accepts as a value: redacting a
# redacted text finds nothing and changes nothing (idempotent). A text with no
# findings is returned as the very same string object.
#
# Guards against prose: a shape must start at a boundary (not in the middle of a
# word, so "risk-free" is not "sk-free"); `sk-` needs 20+ characters with a digit
# or a 20-character alphanumeric run ("sk-learn-compatible-…" stays); hashes,
# UUIDs, paths, e-mail addresses and URLs without credentials match nothing.
#
# Match attempts start only at a handful of literal characters and read at most
# the run they sit in, so redaction is linear in the length of the text; all
# patterns are compiled once, at import.

MASK = "***"

_B64 = r"A-Za-z0-9_\-"                      # base64url
_TOKEN68 = r"A-Za-z0-9._~+/=\-"             # RFC 6750 bearer token characters
_URL_STOP = r"\s/?#\"'<>`\\"                 # ends a URL authority
_VALUE_STOP = r"\s&#\"'<>`\\)\]},;|"         # ends a query value

_QUERY_NAME = r"""(?i:(?:x[-_])?(?:amz[-_]|goog[-_])?(?:
      (?:api|access|secret|private|subscription|app|client|master|account)[-_]?key
    | key
    | (?:access|refresh|id|auth|session|security|private|oauth|bearer|api|app|client)[-_]?token
    | token
    | (?:client|app|consumer|api|shared|webhook)[-_]?secret
    | secret
    | password | passwd | pwd | pass
    | signature | sig
))"""

# Names whose value is a secret in an assignment (password=…, "secret": "…", AWS_SECRET_ACCESS_KEY=…).
_ASSIGNED = r"""(?i:(?<=[pP])(?:assword|asswd|wd|rivate[-_]?key)
    |(?<=[sS])ecret(?:[-_]?(?:access[-_]?)?key)?
    |(?<=[aA])(?:pi[-_]?(?:key|token)|ccess[-_]?(?:key|token)|uth[-_]?token)
    |(?<=[cC])lient[-_]?secret)"""

# Every alternative begins by consuming one literal character (or a small set),
# so the regex engine skips the others at a glance; the boundary check comes
# right after it, as a lookbehind over that character and the one before. The
# empty group that ends an alternative names its kind (it is `lastgroup`).
#   url_userinfo starts at the last "/" of "://" (or of ":\/\/" in JSON text);
#   url_query_secret starts at its "?", "&" or the ";" of "&amp;".
_SHAPES = rf"""
  s(?<![{_B64}].)k-
      (?=[A-Za-z_\-]{{0,63}}[0-9]|(?:[{_B64}]{{0,63}}[_\-])?[A-Za-z0-9]{{20}})
      [{_B64}]{{20,}}(?P<openai_key>)
| A(?<![A-Za-z0-9].)[KS]IA[A-Z0-9]{{16}}(?![A-Za-z0-9])(?P<aws_access_key>)
| g(?<![A-Za-z0-9].)(?:h[pousr]_[A-Za-z0-9]{{36,}}|ithub_pat_[A-Za-z0-9_]{{22,}})(?P<github_token>)
| x(?<![{_B64}].)ox[abprs]-[A-Za-z0-9\-]{{10,}}(?P<slack_token>)
| A(?<![{_B64}].)Iza[{_B64}]{{35,}}(?P<google_api_key>)
| e(?<![{_B64}].)yJ[{_B64}]{{5,}}\.[{_B64}]{{2,}}\.[{_B64}]*(?P<jwt>)
"""
# Shapes added later, each with a keyword `_NEEDS_MORE` finds: a text without any is read by the
# shorter pattern, whose first characters are rarer (most texts; redaction stays as fast as it was).
_MORE_SHAPES = rf"""
  g(?<![{_B64}].)v[ls]_[{_B64}]{{20,}}(?P<gavel_token>)
| g(?<![{_B64}].)lpat-[A-Za-z0-9_\-]{{20,}}(?P<gitlab_token>)
| [sr](?<![{_B64}].)k_(?:live|test)_[A-Za-z0-9]{{16,}}(?P<stripe_key>)
"""
_NEEDS_MORE = ("gvl_", "gvs_", "glpat-", "k_live_", "k_test_", "hooks.slack.com/", "-----begin ", "pass", "pwd",
               "secret", "key", "token")  # lower-cased; a plain `in` per keyword is much faster than one regex

_FAST_ALTERNATIVES = rf"""
  /(?:(?<=://)|(?<=:\\/\\/))(?P<ui_user>[^{_URL_STOP}@:]*):(?P<ui_pass>[^{_URL_STOP}]+)@(?P<url_userinfo>)
| [?&;](?:(?<=[?&])|(?<=&amp;)){_QUERY_NAME}=(?P<q_value>[^{_VALUE_STOP}]+)(?P<url_query_secret>)
| [Bb](?<![{_B64}].)(?i:earer)[ \t]+
      (?P<b_token>(?=[A-Za-z._~+/=\-]{{0,63}}[0-9]|[{_TOKEN68}]{{0,62}}?[a-z][A-Z])
      [{_TOKEN68}]{{15,}}[A-Za-z0-9_~+/=\-])(?P<bearer>)
| {_SHAPES}
"""
_FAST_PATTERN = re.compile(_FAST_ALTERNATIVES, re.VERBOSE)
_PATTERN = re.compile(
    _FAST_ALTERNATIVES + rf"""| h(?<![A-Za-z0-9].)ooks\.slack\.com/(?:services|workflows|triggers)/(?P<w_path>[A-Za-z0-9/_\-]{{8,}})
      (?P<slack_webhook>)
| -----BEGIN[ ][A-Z0-9 ]*PRIVATE[ ]KEY-----(?P<pem_body>(?:(?!-----END)[A-Za-z0-9+/=\s:,.\-])+)
      (?:-----END[ ][A-Z0-9 ]*PRIVATE[ ]KEY-----)?(?P<private_key>)
| {_MORE_SHAPES}
| [pPsSaAcC](?<![A-Za-z0-9].){_ASSIGNED}["']?[ \t]*(?P<a_sep>[:=])[ \t]*["']?
      (?P<a_value>[^\s"'<>`,;&*]{{6,}}+)(?![ \t]*["']?[ \t]*[:=])(?P<assignment>)
""",
    re.VERBOSE,
)
_SHAPE_PATTERN = re.compile(_SHAPES + "|" + _MORE_SHAPES, re.VERBOSE)

# A character that may hide a key from the patterns: a tag, an entity, an invisible character -- the
# term matcher's own table (termlists/invisible.py: every Cf and every default-ignorable character), so a
# character that hides a key hides no term, and the other way round (issue 41).
_INVISIBLE_CLASS = invisible.CLASS
_HIDER = f"[<&{_INVISIBLE_CLASS}]"

# For streams: a match attempt starting at one of these positions may still
# depend on text that has not arrived yet (it reaches the end of what we hold).
# Each alternative starts where the matching alternative above starts and
# covers all it can read before it is decided, so everything before the first
# such position is decided whatever comes next. The query alternative is kept
# apart: it is only looked for in the last run without a value stop, so that a
# run of many "?key=" cannot make the search quadratic.
_OPEN = re.compile(
    rf"""(?:
  /(?:(?<=://)|(?<=:\\/\\/))[^{_URL_STOP}@:]*(?::[^{_URL_STOP}]*)?
| [Bb](?<![{_B64}].)(?i:earer(?:[ \t]+[{_TOKEN68}]*)?|eare|ear|ea|e|)
| s(?<![{_B64}].)(?:k-[{_B64}]*|k|)
| A(?<![A-Za-z0-9].)(?:[KS]IA[A-Z0-9]*|[KS]I|[KS]|)
| g(?<![A-Za-z0-9].)(?:h[pousr]_[A-Za-z0-9]*|h[pousr]|h|
                     ithub_pat_[A-Za-z0-9_]*|ithub_pat|ithub_pa|ithub_p|ithub_|ithub|ithu|ith|it|i|)
| x(?<![{_B64}].)(?:ox[abprs]-[A-Za-z0-9\-]*|ox[abprs]|ox|o|)
| A(?<![{_B64}].)(?:Iza[{_B64}]*|Iz|I|)
| e(?<![{_B64}].)(?:yJ[{_B64}]*(?:\.[{_B64}]*(?:\.[{_B64}]*)?)?|y|)
| g(?<![{_B64}].)(?:v[ls]_[{_B64}]*|v[ls]|v|lpat-[A-Za-z0-9_\-]*|lpat|lpa|lp|l|)
| [sr](?<![{_B64}].)(?:k_(?:live_|test_)[A-Za-z0-9]*|k_(?:l(?:i(?:ve?)?)?|t(?:e(?:st?)?)?)?|k|)
| h(?<![A-Za-z0-9].)[a-z.]{{0,15}}(?:(?<=hooks\.slack\.com)/[A-Za-z0-9/_\-]*)?
| -{{1,5}}(?:B(?:E(?:G(?:I)?)?)?)?
| -----BEGIN(?:[ ][A-Z0-9 ]*-{{0,5}})?
| -----BEGIN[ ][A-Z0-9 ]*PRIVATE[ ]KEY-----(?:(?!-----END)[A-Za-z0-9+/=\s:,.\-])*(?:-----END[A-Z0-9 ]*-{{0,5}})?
| [pPsSaAcC](?<![A-Za-z0-9].){_ASSIGNED}["']?[ \t]*(?:[:=][ \t]*["']?[^\s"'<>`,;&*]*["']?[ \t]*)?
| [pPsSaAcC](?<![A-Za-z0-9].)[A-Za-z_\-]{{0,24}}
| (?<!\S)\S*{_HIDER}\S*
)\Z""",
    re.VERBOSE,
)
_OPEN_QUERY = re.compile(
    rf"[?&;](?:(?<=[?&])|(?<=&amp;))(?:[A-Za-z_\-]{{0,40}}|{_QUERY_NAME}=[^{_VALUE_STOP}]*)\Z", re.VERBOSE
)
_LAST_VALUE_STOP = re.compile(rf"[{_VALUE_STOP}][^{_VALUE_STOP}]*\Z")
# No undecided attempt reads past one of these (a space or tab only right after
# "Bearer"), so a chunk holding one may let held text go.
_CLOSER = re.compile(r"[\s\"'<>`\\]")
_LAZY_FROM = 256  # from this many held characters, look again only at twice the size or at a closer
_LOOKBEHIND = 8  # characters of already-emitted text a stream keeps for lookbehinds (longest: "&amp;")

_KEEP_PREFIX = {"openai_key": 3, "aws_access_key": 4, "slack_token": 5, "google_api_key": 4, "jwt": 3,
                "gavel_token": 4, "stripe_key": 8, "gitlab_token": 6}


@dataclass(frozen=True)
class Finding:
    """One masked value: its kind and its [start, end) in the original text. Never the value."""

    kind: str
    start: int
    end: int


@dataclass(frozen=True)
class RedactionResult:
    """The redacted text and what was masked, in order of position."""

    text: str
    findings: list[Finding]


def _shape_edits(text: str, start: int, end: int) -> list[tuple[int, int, str, str]]:
    return [(match.start(), match.end(), _mask_for(match.lastgroup, match.group()), match.lastgroup)
            for match in _SHAPE_PATTERN.finditer(text, start, end)]


def _mask_for(kind: str, value: str) -> str:
    """What replaces a key of this kind: its type prefix kept (as the original shows it), the rest masked.
    For a key only the normalised text shows, the original's first characters are the normalised key's
    first ones with at most some hidden ones among them: never more of the key than the prefix."""
    if kind == "github_token":
        return ("github_pat_" if value.startswith("github_pat_") else value[:4]) + MASK
    return value[: _KEEP_PREFIX[kind]] + MASK if kind in _KEEP_PREFIX else MASK


def _edits(match: re.Match) -> list[tuple[int, int, str, str]]:
    """The replacements one match makes: (start, end, replacement, kind), in order."""
    kind = match.lastgroup
    if kind == "url_userinfo":
        edits = _shape_edits(match.string, *match.span("ui_user"))
        if match.group("ui_pass") != MASK:
            edits.append((*match.span("ui_pass"), MASK, kind))
        return edits
    if kind == "url_query_secret":
        if match.group("q_value") == MASK:
            return []
        return [(*match.span("q_value"), MASK, kind)]
    if kind == "bearer":
        return [(*match.span("b_token"), MASK, kind)]
    if kind == "slack_webhook":
        return [(*match.span("w_path"), MASK, kind)]
    if kind == "private_key":
        return [(*match.span("pem_body"), MASK, kind)]
    if kind == "assignment":
        value = match.group("a_value")
        if match.group("a_sep") == ":" and value.isalpha():
            return []  # "Password: please…" is prose; a secret after a colon has a digit or a symbol
        return [(*match.span("a_value"), MASK, kind)]
    return _shape_edits(match.string, *match.span())


def _apply(text: str, start: int, end: int, edits: list[tuple[int, int, str, str]]) -> str:
    pieces = []
    position = start
    for edit_start, edit_end, replacement, _kind in edits:
        pieces.append(text[position:edit_start])
        pieces.append(replacement)
        position = edit_end
    pieces.append(text[position:end])
    return "".join(pieces)


def redact(text: str) -> RedactionResult:
    """Mask every secret-shaped value in `text`, as delivered and as normalised (tags, entities and
    invisible format characters removed); the same object comes back when nothing matched."""
    edits = []
    for match in _pattern_for(text).finditer(text):
        edits.extend(_edits(match))
    edits = _with_hidden(text, 0, len(text), edits)
    if not edits:
        return RedactionResult(text, [])
    findings = [Finding(kind, start, end) for start, end, _replacement, kind in edits]
    return RedactionResult(_apply(text, 0, len(text), edits), findings)


def _pattern_for(text: str) -> re.Pattern:
    lowered = text.lower()
    return _PATTERN if any(keyword in lowered for keyword in _NEEDS_MORE) else _FAST_PATTERN


def _with_hidden(text: str, start: int, end: int, edits: list) -> list:
    """`edits` plus the masks of keys only the normalised text[start:end] shows, in order, none overlapping."""
    if not _MAY_HIDE.search(text, start, end):
        return edits
    hidden = [(s + start, e + start, r, k) for s, e, r, k in _hidden_edits(text[start:end])]
    if not hidden:
        return edits
    # A key split by a hidden character may have a visible head that matched on its own: the mask of
    # the whole key replaces that one, covering both.
    # The merged mask is of the kind of the edit that starts first (the whole key on a tie), and keeps
    # only that one's prefix: never the head of another secret.
    merged = []
    for h_start, h_end, _replacement, kind in hidden:
        overlapping = [edit for edit in edits if edit[0] < h_end and h_start < edit[1]]
        if overlapping:
            edits = [edit for edit in edits if edit not in overlapping]
            first = min(overlapping)
            if first[0] < h_start:
                kind = first[3]
            h_start = min(h_start, first[0])
            h_end = max(h_end, *(edit[1] for edit in overlapping))
        merged.append((h_start, h_end, _mask_for(kind, text[h_start:h_end]), kind))
    return sorted(edits + merged)


# What can hide a key from the patterns above: a tag, an entity, an invisible format character.
_MAY_HIDE = re.compile(_HIDER)
_INVISIBLE = re.compile(f"[{_INVISIBLE_CLASS}]")


def _normalised(text: str) -> tuple[str, list[int]]:
    """The text as a term list reads it (SPEC's matching contract) and, per character, its start in `text`."""
    import html

    pieces: list[str] = []
    where: list[int] = []
    position = 0
    for token in _HIDING_TOKEN.finditer(text):
        if token.start() > position:
            pieces.append(text[position:token.start()])
            where.extend(range(position, token.start()))
        value = token.group()
        if value[0] == "&":
            decoded = html.unescape(value)
            if decoded == value:  # not an entity after all: kept as it is
                pieces.append(value)
                where.extend(range(token.start(), token.end()))
            else:
                # An entity may stand for an invisible character (dropped, as the term matcher drops it);
                # "&amp;" and "&lt;" stand for characters a reader sees, which stay and end a key.
                decoded = "".join(c for c in decoded if not _INVISIBLE.match(c))
                pieces.append(decoded)
                where.extend([token.start()] * len(decoded))
        # a tag or a run of invisible format characters is removed without a trace
        position = token.end()
    pieces.append(text[position:])
    where.extend(range(position, len(text)))
    return "".join(pieces), where


_ENTITY = re.compile(r"&(?:#[0-9]{1,8};?|#[xX][0-9A-Fa-f]{1,8};?|[A-Za-z][A-Za-z0-9]{1,31};?)")
# A tag (the matcher's own rule), an entity, or a run of invisible characters.
_HIDING_TOKEN = re.compile(r"<[A-Za-z/!?][^>]*>|" + _ENTITY.pattern + f"|[{_INVISIBLE_CLASS}]+")


def _hidden_edits(text: str) -> list[tuple[int, int, str, str]]:
    """Masks for keys that only the normalised text shows: each covers the original stretch the key spans."""
    normal, where = _normalised(text)
    if normal == text:
        return []
    edits: list[tuple[int, int, str, str]] = []
    for match in _pattern_for(normal).finditer(normal):
        for start, end, _replacement, kind in _edits(match):
            if end <= start:
                continue
            original_start = where[start]
            original_end = _source_end(text, where, end)
            if text[original_start:original_end] == normal[start:end]:
                continue  # visible as it is: the plain pass masked it already (or it is a mask)
            if edits and original_start < edits[-1][1]:
                continue
            edits.append((original_start, original_end, MASK, kind))
    return edits


def _source_end(text: str, where: list[int], end: int) -> int:
    """Where, in the original, the normalised character end-1 ends: one character, or one whole entity."""
    last = where[end - 1]
    if text[last] == "&":
        entity = _ENTITY.match(text, last)
        return entity.end() if entity is not None else last + 1
    return last + 1


def _first_open(text: str, base: int) -> int:
    """The first position at or after `base` where a match attempt is still undecided (or the end)."""
    first = len(text)
    found = _OPEN.search(text, base)
    if found is not None:
        first = found.start()
    stop = _LAST_VALUE_STOP.search(text, base)
    found = _OPEN_QUERY.search(text, stop.start() if stop is not None else base)
    if found is not None:
        first = min(first, found.start())
    return first


class StreamRedactor:
    """Redaction for a live stream: what `feed` and `flush` return, joined, is `redact(whole).text`.

    Hold-back: text is emitted up to the first position where a match attempt
    is still undecided — where what is held could be the start of a secret (a
    lone "s", "sk-abc", "AKIA12", "Bearer ", "eyJhbGc.eyJz", the credentials
    part of "https://user:pa", the value of "?token=ab"). Everything before it
    is decided whatever arrives next, so it is redacted and sent; ordinary prose
    holds back at most its last partial word. The window is as long as the
    secret-shaped run being streamed (a JWT is held until it ends) and there is
    no fixed cap: cutting a long token short would let its head out unmasked,
    and the output would no longer equal `redact(whole)`. Once 256 or more
    characters are held, the check waits for a chunk with a space, quote, "<",
    ">", backtick or backslash (which ends any undecided run) or for the held
    text to double, so streaming stays linear; holding longer is always safe.
    `findings` offsets are into the whole stream; `feed` after `flush` is an
    error.
    """

    def __init__(self) -> None:
        self.findings: list[Finding] = []
        self._context = ""   # last characters already emitted (original text), for lookbehinds
        self._held = ""      # original text not yet emitted
        self._offset = 0     # offset of `_held` in the whole stream
        self._recheck_at = 0  # while a long run is held: look again at this size, or at a closer
        self._flushed = False

    @property
    def held(self) -> int:
        """How many characters are held back right now."""
        return len(self._held)

    def feed(self, chunk: str) -> str:
        """Take the next chunk; return the text that is safe to emit now (may be empty)."""
        if self._flushed:
            raise RuntimeError("StreamRedactor.feed after flush")
        if not chunk:
            return ""
        self._held += chunk
        if len(self._held) < self._recheck_at and not _CLOSER.search(chunk):
            return ""   # it can only extend a long undecided run: deciding can wait, holding is always safe
        return self._emit(final=False)

    def flush(self) -> str:
        """End of the stream: return everything still held, redacted."""
        if self._flushed:
            return ""
        self._flushed = True
        return self._emit(final=True)

    def _emit(self, final: bool) -> str:
        text = self._context + self._held
        base = len(self._context)
        cut = len(text)
        if not final:
            cut = _first_open(text, base)
        edits = []
        for match in _PATTERN.finditer(text, base):
            if match.start() >= cut:
                break
            if match.end() > cut:   # decided, but reaches into the held part: hold it whole
                cut = match.start()
                break
            edits.extend(_edits(match))
        out = ""
        if cut > base:
            edits = _with_hidden(text, base, cut, edits)
            shift = self._offset - base
            self.findings.extend(Finding(kind, start + shift, end + shift) for start, end, _r, kind in edits)
            out = _apply(text, base, cut, edits) if edits else text[base:cut]
            self._context = text[max(0, cut - _LOOKBEHIND):cut]
            self._held = text[cut:]
            self._offset += cut - base
        held = len(self._held)
        self._recheck_at = 2 * held if held >= _LAZY_FROM else 0
        return out
