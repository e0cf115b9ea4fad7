"""The conformance suite: one table of cases, run through every protocol Gavel speaks (SPEC §11.8)."""
