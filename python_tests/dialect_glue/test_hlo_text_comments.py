"""hlo_text._blank_comments (one regular expression) against a character-by-character
scan of the same rules: every string over the characters that matter up to length 5,
and seeded random longer ones."""

from __future__ import annotations

import itertools
import random

from hlo_indexing.dialect_glue.hlo_text import _blank_comments

ALPHABET = '"\\/*\na '


def scan(text: str) -> str:
    """The reference: walk the text; a string literal runs to its closing quote (a
    backslash skips the next character); ``//`` runs to the end of the line, ``/*`` to
    ``*/``; comments become spaces, newlines stay."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        if text[i] == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out[i:end] = " " * (end - i)
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out[i:end] = [c if c == "\n" else " " for c in text[i:end]]
            i = end
        else:
            i += 1
    return "".join(out)


def test_every_short_string() -> None:
    for length in range(6):
        for chars in itertools.product(ALPHABET, repeat=length):
            text = "".join(chars)
            assert _blank_comments(text) == scan(text), repr(text)


def test_random_long_strings() -> None:
    rng = random.Random(17)
    for _ in range(3000):
        text = "".join(rng.choice(ALPHABET + "bc%=") for _ in range(rng.randrange(6, 60)))
        assert _blank_comments(text) == scan(text), repr(text)


def test_hlo_comment_blanked() -> None:
    text = 'p0 = f32[4] parameter(0) /* note\n "x" */ // tail "q\nROOT r = f32[4] negate(p0), metadata={op_name="a//b"}'
    blanked = _blank_comments(text)
    assert blanked.splitlines()[0] == "p0 = f32[4] parameter(0) " + " " * len("/* note")
    assert blanked.splitlines()[1].strip() == ""
    assert 'op_name="a//b"' in blanked and len(blanked) == len(text)
