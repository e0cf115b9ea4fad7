"""The text hash of evidence records (SPEC §13.1): one normalisation, one keyed HMAC; no Django here.

normalise() decides what survives a copy from a published page (docs/evidence.md):
- Unicode NFC, so composed and decomposed accents hash alike;
- invisible format characters a CMS or a copy adds are removed: zero-width space, joiners, word joiner,
  byte-order mark, soft hyphen;
- every run of whitespace (spaces, tabs, no-break spaces, any line ending, line and paragraph separators)
  becomes one space, and the ends are trimmed: line wrapping and paragraph breaks do not matter.
Everything else counts: letters and their case, punctuation (typographic quotes are not plain ones),
digits, and markup (a text delivered with tags verifies with its tags).
"""
import hashlib
import hmac
import unicodedata

SCHEME = "gavel-evidence-v1"
# Removed before hashing: they change no visible character of a paragraph.
INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"))


def normalise(text: str) -> str:
    """The text as it is hashed: NFC, invisible format characters removed, whitespace runs as one space."""
    text = unicodedata.normalize("NFC", text).translate(INVISIBLE)
    return " ".join(text.split())


def derive_key(secret: str) -> bytes:
    """The evidence key: HMAC-SHA256 of the scheme name under the installation's secret, so the secret
    itself never hashes texts and a key for another purpose can be derived the same way."""
    return hmac.new(secret.encode("utf-8"), SCHEME.encode("ascii"), hashlib.sha256).digest()


def key_id(key: bytes) -> str:
    """A fingerprint of the key (16 hex digits) that tells a changed key without revealing it."""
    return hashlib.sha256(b"key-id:" + key).hexdigest()[:16]


def text_hash(text: str, key: bytes) -> str:
    """HMAC-SHA256 of the normalised text, as 64 hex digits."""
    return hmac.new(key, normalise(text).encode("utf-8"), hashlib.sha256).hexdigest()
