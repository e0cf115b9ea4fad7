"""What an agent client is shown of a block and of hints, by the consumer's properties (SPEC §11.9)."""
from types import SimpleNamespace

from governance.protocols import presentation

HINTED = {"outcome": "allowed_with_hints", "text": "Book now!",
          "hints": [{"message": "Rule 1 (no exclamation mark in a headline): “Book now!”"},
                    {"message": "  Rule 3:\n “8”  "}]}


def consumer(blocks_as="refusal", hints_as="member"):
    return SimpleNamespace(blocks_as=blocks_as, hints_as=hints_as)


def test_a_note_lists_each_hint_on_a_line_of_its_own_only_for_a_consumer_that_asked():
    assert presentation.hint_note(HINTED, consumer()) == ""
    note = presentation.hint_note(HINTED, consumer(hints_as="note"))
    assert note == "\n\n---\nGavel: Rule 1 (no exclamation mark in a headline): “Book now!”\nGavel: Rule 3: “8”"


def test_no_note_without_hints_or_on_a_block():
    assert presentation.hint_note({"outcome": "allowed", "hints": []}, consumer(hints_as="note")) == ""
    blocked = {**HINTED, "outcome": "blocked", "block": {"message": "The term list “Brand” does not allow: Kunde."}}
    assert presentation.hint_note(blocked, consumer(hints_as="note")) == ""
    assert presentation.block_text(blocked) == "The term list “Brand” does not allow: Kunde."


def test_blocks_as_message_is_the_consumers_choice_and_refusal_by_default():
    assert not presentation.blocks_as_message(consumer())
    assert presentation.blocks_as_message(consumer(blocks_as="message"))
    assert not presentation.blocks_as_message(SimpleNamespace())
