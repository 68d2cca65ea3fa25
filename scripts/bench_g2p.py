#!/usr/bin/env python3
"""G2P cost per language: load time in a fresh interpreter, and time per sentence.

    make bench-g2p                      # or: python scripts/bench_g2p.py [--rounds 20] [--json out.json]

Prints a Markdown table (the one in docs/languages.md). Each language is measured in its own
interpreter, so a load includes the imports it needs (spaCy for English).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

SAMPLES = {
    "en-US": ["Hello, Dr. Smith! It's 3:30 p.m. and I owe you $29.50.", "The quick brown fox jumps over the lazy dog near the riverbank."],
    "en-GB": ["The colour of the theatre's curtain was rather lovely, wasn't it?", "I've booked a flat in London for £1,250 a month."],
    "es": ["¿Cómo estás? Estoy bien, gracias.", "El doctor llegó a las 3.5 horas del 12 de mayo de 2024."],
    "fr": ["« Bonjour », dit-il. C'est un petit enfant.", "Il y a 25 ans, j'avais 3,5 euros dans ma poche."],
    "hi": ["नमस्ते, आप कैसे हैं?", "मेरा नाम राम है और मैं दिल्ली में रहता हूँ।"],
    "it": ["Ciao, come stai? Gli amici dell'università sono qui.", "Ho 25 anni e vivo a Roma da molto tempo."],
    "ja": ["今日はいい天気ですね、散歩に行きましょう。", "東京都の人口は約1400万人です。"],
    "pt-BR": ["Olá, tudo bem? Os meninos estão no parque.", "Eu tenho 25 anos e moro em São Paulo."],
    "zh": ["今天是2024年3月5日，气温25.5度。", "我们明天一起去北京天安门广场吧。"],
}


def measure(code: str, rounds: int) -> dict:
    began = time.perf_counter()
    from tts_server.engine.languages import G2PCache

    g2p = G2PCache().get(code)
    load = time.perf_counter() - began
    first = time.perf_counter()
    g2p(SAMPLES[code][0])
    first = time.perf_counter() - first
    times = []
    for _ in range(rounds):
        for text in SAMPLES[code]:
            start = time.perf_counter()
            g2p(text)
            times.append(time.perf_counter() - start)
    return {
        "language": code,
        "load_s": round(load, 2),
        "first_sentence_ms": round(first * 1000, 1),
        "median_ms": round(statistics.median(times) * 1000, 2),
        "max_ms": round(max(times) * 1000, 2),
        "chars_per_sentence": round(statistics.mean(len(t) for t in SAMPLES[code])),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--json", help="also write the rows here")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # internal: measure one language, print JSON
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one, args.rounds)))
        return
    rows = []
    for code in SAMPLES:
        out = subprocess.run(
            [sys.executable, __file__, "--one", code, "--rounds", str(args.rounds)],
            capture_output=True, text=True, check=True,
        ).stdout
        rows.append(json.loads(out.strip().splitlines()[-1]))
    print("| language | load (s) | first sentence (ms) | median sentence (ms) | max (ms) | chars/sentence |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['language']} | {r['load_s']} | {r['first_sentence_ms']} | {r['median_ms']} | {r['max_ms']} | {r['chars_per_sentence']} |")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(rows, handle, indent=2)


if __name__ == "__main__":
    main()
