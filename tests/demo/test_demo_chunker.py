"""The page's agent mode cuts a token stream with a JavaScript copy of tts_text.chunker
(static/chunker.js): its tables are generated from the Python ones and must be up to date, and
run under node (the page's engine, V8) it gives the shared case table's sentences
(tests/text/chunker_cases.json, every language) and the Python chunker's on random token streams."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tts_text.chunker import ABBREVIATIONS, DEVANAGARI_ABBREVIATIONS, SentenceChunker

REPO = Path(__file__).resolve().parents[2]
CHUNKER_JS = REPO / "container" / "tts_server" / "static" / "chunker.js"
CASES = json.loads((REPO / "tests" / "text" / "chunker_cases.json").read_text())
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed (the CDK CLI needs it too: nodejs.org)")
# Characters that decide cuts, in every language the chunker knows, for random texts.
ALPHABET = list("ab1 .,;:!?。、，！？｡「」』）\"'»«\n…¿¡।॥—–\u00a0\u202fAZéç") + [
    "Mr", "e.g", "3.5", "😀", "ok", "です", "と", "Sra", "pág", "Mme", "dott", "Exma", "डॉ", "राम", "你好", "U.S"]


def node_cuts(cases: list[dict]) -> list[list[str]]:
    run = subprocess.run([NODE, str(Path(__file__).parent / "run_chunker.mjs"), str(CHUNKER_JS)],
                         input=json.dumps(cases), capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def python_cuts(pieces: list[str], fast: int | None) -> list[str]:
    chunker = SentenceChunker(fast_first_fragment=fast)
    return [s for piece in pieces for s in chunker.feed(piece)] + chunker.flush()


def split(text: str, rng: random.Random) -> list[str]:
    pieces, i = [], 0
    while i < len(text):
        size = rng.randint(1, 4)
        pieces.append(text[i:i + size])
        i += size
    return pieces


def test_the_generated_tables_are_up_to_date():
    run = subprocess.run([sys.executable, str(REPO / "scripts" / "chunker_tables.py"), "--check"],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr


def test_a_drifted_table_is_found(tmp_path, monkeypatch):
    sys.path.insert(0, str(REPO / "scripts"))
    import chunker_tables

    copy = tmp_path / "chunker.js"
    copy.write_text(CHUNKER_JS.read_text().replace('"mme", ', ""))  # the page forgets one abbreviation
    assert chunker_tables.generate(chunker_tables.TABLES, [copy], tmp_path, "x", ["--check"]) == 1
    chunker_tables.generate(chunker_tables.TABLES, [copy], tmp_path, "x", [])
    assert copy.read_text() == CHUNKER_JS.read_text()


@needs_node
def test_the_pages_chunker_gives_the_shared_cases_sentences():
    rng = random.Random(7)
    runs = [(case, pieces) for case in CASES for pieces in ([case["text"]], list(case["text"]), split(case["text"], rng))]
    got = node_cuts([{"pieces": pieces, "fast": case.get("fast_first_fragment")} for case, pieces in runs])
    wrong = [(case["rule"], pieces, sentences) for (case, pieces), sentences in zip(runs, got, strict=True)
             if sentences != case["sentences"]]
    assert not wrong, wrong[:3]


@needs_node
def test_the_pages_chunker_cuts_random_token_streams_like_the_python_one():
    rng = random.Random(12)
    words = sorted(ABBREVIATIONS | DEVANAGARI_ABBREVIATIONS)
    texts = [f"{rng.choice(['La', 'the', 'श्री'])} {word}. Next {word}. ok" for word in words]
    texts += ["".join(rng.choices(ALPHABET, k=rng.randint(1, 40))) for _ in range(1500)]
    cases = [{"pieces": pieces, "fast": fast} for text in texts for pieces in ([text], split(text, rng))
             for fast in (None, 3, 10)]
    expected = [python_cuts(c["pieces"], c["fast"]) for c in cases]
    mismatches = [(c, g, e) for c, g, e in zip(cases, node_cuts(cases), expected, strict=True) if g != e]
    assert not mismatches, mismatches[:3]
    assert sum(len(e) for e in expected) > 2 * len(cases)  # the corpus does cut sentences
