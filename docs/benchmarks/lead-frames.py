# The first window started LEAD_FRAMES (4, 8, or all the lead: 99) before the speech, no make-up, windows sized
# for rtf 0.3; CER of each against the whole decode over bench_windows.CORPUS["ja"]. Run from the repository root:
#   PYTHONPATH=.:container:scripts .venv/bin/python docs/benchmarks/lead-frames.py onnx  (or: torch MODEL_DIR)
import sys
import tempfile
from pathlib import Path
sys.path[:0] = ["", "container", "scripts"]
import bench_windows  # noqa: E402
import intelligibility  # noqa: E402
import numpy as np  # noqa: E402

from tts_server.engine import windows as W  # noqa: E402
from tts_server.engine.factory import build_synthesizer  # noqa: E402
syn = build_synthesizer(sys.argv[1], "cpu", sys.argv[2] if len(sys.argv) > 2 else None, languages=["ja"])
style = syn.voice_book("ja").resolve("default")
scratch = Path(tempfile.mkdtemp())
def cer(text, audio, start, end):
    p = scratch / "a.wav"; p.write_bytes(intelligibility.encode(audio[start:end], "wav", 24000))
    return intelligibility.cer(text, intelligibility.transcribe(p, "ja", 24000), "ja")
tot = {}; chars = 0
for text in bench_windows.CORPUS["ja"]:
    job = syn.prepare(text, 0, len(text), style, 1.0, "ja").jobs[0]
    b = syn.backend
    front = b.front(job.ids, job.style, job.speed)
    whole = b.decode(front, 0, front.frames)
    start, end = syn.pauses.trim(whole)
    row = {"whole": cer(text, whole, start, end)}
    for lead in (4, 8, 99):
        W.LEAD_FRAMES = lead
        ws = W.plan(front.durations, 0.3, front.energy)
        sp = W.Splicer(ws, None)
        spliced = np.concatenate([sp.add(b.decode(front, w.start, w.end)) for w in ws])
        row[f"lead{lead}"] = cer(text, spliced, start, end)
        row[f"frames{lead}"] = ws[0].end - ws[0].start
    W.LEAD_FRAMES = 4
    chars += len(text)
    for k, v in row.items(): tot[k] = tot.get(k, 0) + v * (len(text) if not k.startswith("frames") else 1)
    print(text[:15], {k: round(v, 2) for k, v in row.items()}, flush=True)
print("CORPUS", {k: round(v / chars, 4) if not k.startswith("frames") else v for k, v in tot.items()})
