"""The punctuation the speech is cut and paced by, one record for every reader of it: the chunker
(tts_text/chunker.py, and the demo page's copy in container/tts_server/static/chunker.js,
whose tables scripts/chunker_tables.py generates from this module) and the pauses the server
puts between pieces (container/tts_server/engine/pauses.py).
"""

from __future__ import annotations

# Terminators that always end a sentence (a run like "!?" or "！？" counts as one); Devanagari
# has the danda and double danda. The period ends one only where the text after it says so
# (the chunker's rules: decimals, abbreviations, initials, ellipses, "example.com").
SENTENCE_ENDS = "。！？!?｡।॥"
# Closing quotes and brackets that belong to the sentence (or clause) they follow.
CLOSERS = "」』）)]}\"'”’»〉》】"
# Marks that end a clause: a long first sentence may be cut there, and a piece ending with one
# is followed by the short (clause) pause.
CLAUSE_MARKS = "、，,;；:：—–"
# Those written between words end a clause only before a space ("1,000", "1990–2000").
SPACED_CLAUSE_MARKS = ",;:—–"
# Spanish opens questions and exclamations: a sentence starts at ¿ or ¡ and no clause ends
# before its closing mark.
INVERTED_OPENERS = {"¿": "?", "¡": "!"}
# Spaces inside a line: French puts one before » and before ! ? ; :.
INLINE_SPACES = " \u00a0\u202f"
