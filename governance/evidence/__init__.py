"""Evidence of editorial control (SPEC §13.1): records of delivered texts, their keyed hash, verify and export."""
