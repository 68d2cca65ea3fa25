// A line-by-line port of tts_text/chunker.py (SentenceChunker), so the page's agent mode
// cuts an LLM's token stream exactly where a Python voice agent (run_bidi) would.
// tests/demo/test_demo_chunker.py checks the two agree on the same texts and token splits.

const HARD_TERMINATORS = "。！？!?｡";
const CLOSERS = "」』）)]}\"'”’»〉》】";
const CLAUSE_MARKS = "、，,;；:：";
const ABBREVIATIONS = new Set(
  `mr mrs ms mx dr prof sr jr st mt vs etc e.g i.e a.m p.m cf al approx dept est fig
  inc ltd co corp no vol ed eds gen gov lt col sgt capt rev jan feb mar apr jun jul aug
  sep sept oct nov dec u.s u.k u.n ph.d`.split(/\s+/).filter(Boolean),
);
const WORD_BEFORE_DOT = /([A-Za-z][A-Za-z.]*)$/;

class Undecided extends Error {}

const isSpace = (c) => c !== undefined && /\s/u.test(c);
const isDigit = (c) => c !== undefined && /\p{Nd}/u.test(c);
const isHiragana = (c) => c >= "\u3041" && c <= "\u309f";

function isAbbreviation(text, dot) {  // text: an array of code points
  const match = WORD_BEFORE_DOT.exec(text.slice(0, dot).join(""));
  if (!match) return false;
  const word = match[1].toLowerCase();
  return ABBREVIATIONS.has(word) || word.length === 1 || (word.includes(".") && word.length <= 5);
}

function skipClosers(text, i, final) {
  while (i < text.length && CLOSERS.includes(text[i])) i += 1;
  if (i === text.length && !final) throw new Undecided();
  return i;
}

function endAfterPeriod(text, i, final) {
  const n = text.length;
  if (i + 1 < n && text[i + 1] === ".") return null;
  if (i > 0 && text[i - 1] === ".") return null;
  if (i + 1 === n && !final) throw new Undecided();
  if (i + 1 < n && isDigit(text[i - 1]) && isDigit(text[i + 1])) return null;
  if (isAbbreviation(text, i)) return null;
  const end = skipClosers(text, i + 1, final);
  if (end < n && !isSpace(text[end])) return null;
  return end;
}

function sentenceEnd(text, i, final) {
  const char = text[i];
  if (char === "\n") return i + 1;
  if (HARD_TERMINATORS.includes(char)) {
    let end = i;
    while (end < text.length && HARD_TERMINATORS.includes(text[end])) end += 1;
    const closed = skipClosers(text, end, final);
    if (closed > end && closed < text.length && isHiragana(text[closed])) return null;
    return closed;
  }
  if (char === ".") return endAfterPeriod(text, i, final);
  return null;
}

function clauseEnd(text, i, final) {
  const char = text[i];
  if (!CLAUSE_MARKS.includes(char)) return null;
  if (",:;".includes(char)) {
    if (i + 1 === text.length) {
      if (!final) throw new Undecided();
      return null;
    }
    if (!isSpace(text[i + 1])) return null;
  }
  return skipClosers(text, i + 1, final);
}

function trimmed(text) {
  let start = 0;
  let end = text.length;
  while (start < end && isSpace(text[start])) start += 1;
  while (end > start && isSpace(text[end - 1])) end -= 1;
  return text.slice(start, end);
}

// Strings are handled as arrays of code points, as Python indexes them.
export class SentenceChunker {
  constructor(fastFirstFragment = null) {
    this.fastFirstFragment = fastFirstFragment;
    this.buffer = [];
    this.offset = 0;
    this.scanned = 0;
    this.released = 0;
  }

  feed(fragment) {
    this.buffer.push(...Array.from(fragment));
    return this.cut(false);
  }

  flush() {
    const sentences = this.cut(true);
    this.release(this.buffer.length, sentences);
    return sentences;
  }

  cut(final) {
    const sentences = [];
    let i = this.scanned;
    while (i < this.buffer.length) {
      let end;
      try {
        end = sentenceEnd(this.buffer, i, final);
        if (end === null && this.wantsFastFragment(i)) end = clauseEnd(this.buffer, i, final);
      } catch (error) {
        if (error instanceof Undecided) break;
        throw error;
      }
      if (end === null) {
        i += 1;
        this.scanned = i;
      } else {
        this.release(end, sentences);
        i = 0;
      }
    }
    return sentences;
  }

  wantsFastFragment(i) {
    return this.fastFirstFragment !== null && this.released === 0 && this.offset + i >= this.fastFirstFragment;
  }

  release(end, into) {
    const sentence = trimmed(this.buffer.slice(0, end).join(""));
    if (sentence) {
      into.push(sentence);
      this.released += 1;
    }
    this.buffer = this.buffer.slice(end);
    this.offset += end;
    this.scanned = 0;
  }
}
