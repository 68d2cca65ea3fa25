"""The engine layer scripts/gpu_check.py measures: Kokoro-82M's architecture from config.json with
seeded random weights, durations forced to ones recorded from the real model, and a backend the
server's scheduler runs (../shared/GPU.md: the real weights do not travel to the GPU box).

    python scripts/gpu_check.py --record scripts/gpu_check_inputs.json --model-dir .cache/model-dir

records the inputs: the model's config, and per benchmark sentence its token ids, style row and the
real model's durations, so each item produces the audio length (and the compute per audio second)
the real model would.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import tempfile
import types
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "container")]

from tts_server.engine.backend import Inference  # noqa: E402
from tts_server.engine.batched_forward import forward_batch  # noqa: E402
from tts_server.engine.torch_backend import fold_weight_norm  # noqa: E402

SENTENCES = {  # the benchmark texts (scripts/bench.py) and English of similar lengths
    "ja": ["こんにちは。", "本日はご来店いただき、誠にありがとうございます。", "ただいま春の新商品を多数取り揃えております。",
           "気になる商品がございましたら、お気軽にスタッフまでお声がけください。", "本日限りの特別割引もございます。",
           "どうぞごゆっくりお買い物をお楽しみください。"],
    "en-US": ["Hello there.", "Thank you for calling, how can I help you today?",
              "Your order has shipped and should arrive on Thursday afternoon.",
              "If you have any questions about the delivery, please reply to this message and we will get back to you."],
}


def kmodel_class():
    """kokoro's KModel; where kokoro's package cannot be imported (its __init__ pulls in misaki and
    spaCy, absent on the GPU box) its model module alone, which needs only torch and transformers."""
    try:
        from kokoro import KModel
    except ImportError:
        spec = importlib.util.find_spec("kokoro")
        if spec is None:
            raise SystemExit("kokoro is not installed: pip install kokoro==0.9.4 (or carry its wheel)") from None
        package = types.ModuleType("kokoro")
        package.__path__ = list(spec.submodule_search_locations)
        sys.modules["kokoro"] = package
        from kokoro.model import KModel
    return KModel


def seeded_model(config: dict, seed: int = 0):
    """The real architecture with torch's seeded initialisation instead of trained weights, on the
    CPU: the same seed gives the same weights (a copy per device), weight norm folded as the
    engine folds it (torch_backend.fold_weight_norm)."""
    torch.manual_seed(seed)
    with tempfile.TemporaryDirectory() as folder:
        empty = Path(folder) / "no-weights.pth"
        torch.save({}, empty)  # KModel loads nothing from it: every module keeps its seeded init
        return fold_weight_norm(kmodel_class()(repo_id="hexgrad/Kokoro-82M", config=config, model=str(empty)).eval())


def trained_model(model_dir: Path):
    """Kokoro-82M with the weights of a deployed model directory (config.json, kokoro-v1_0.pth), on the CPU."""
    config = json.loads((model_dir / "config.json").read_text())
    return fold_weight_norm(
        kmodel_class()(repo_id="hexgrad/Kokoro-82M", config=config, model=str(model_dir / "kokoro-v1_0.pth")).eval())


class ForcedDurations:
    """duration_proj's output replaced so that each token's duration rounds to the recorded one:
    the first d of its channels saturate (sigmoid 1), the rest are off (0); speed 1."""

    def __init__(self, model, table: dict[tuple[int, ...], list[int]]):
        self.table = table
        self.rows: list[list[int]] | None = None
        self._hook = model.predictor.duration_proj.register_forward_hook(self._force)

    def remove(self) -> None:
        self._hook.remove()

    def _force(self, module, args, output):
        if self.rows is None:
            return None
        batch, tokens, channels = output.shape
        wanted = torch.ones(batch, tokens, dtype=torch.long)
        for row, durations in enumerate(self.rows):
            wanted[row, : len(durations)] = torch.tensor(durations)
        on = torch.arange(channels)[None, None, :] < wanted[:, :, None]
        return torch.where(on, 30.0, -30.0).to(output.device, output.dtype)


class SeededBackend:
    """What ModelRunner needs (runner.py): infer and infer_batch over the batched forward."""

    name = "kokoro-82m-seeded"

    def __init__(self, model, table: dict[tuple[int, ...], list[int]], max_batch: int = 64):
        self.model = model
        self.device = model.device.type
        self.max_tokens = model.context_length - 2
        self.vocab = model.vocab
        self.voices: dict = {}
        self.default_max_batch = max_batch
        self.forced = ForcedDurations(model, table)

    def infer(self, token_ids, style, speed, control=None) -> Inference:
        return self.infer_batch([(token_ids, style, speed)], control)[0]

    def infer_batch(self, items, control=None, seeds=None) -> list[Inference]:
        self.forced.rows = [self.forced.table[tuple(ids)] for ids, _, _ in items]
        try:
            rows = forward_batch(self.model, list(items), seeds=seeds)
        finally:
            self.forced.rows = None
        if self.device == "cuda":
            torch.cuda.synchronize()
        return [Inference(audio=audio, durations=durations) for audio, durations in rows]


def load_inputs(path: Path, tiny: bool = False) -> dict:
    """The recorded inputs; tiny: the two shortest items cut to 8 tokens of at most 2 frames each
    (a tenth of a second of audio: the suite's run exercises every path in seconds)."""
    data = json.loads(path.read_text())
    if tiny:
        data["items"] = [{**item, "ids": item["ids"][:8], "durations": [min(2, d) for d in item["durations"][:10]]}
                         for item in sorted(data["items"], key=lambda i: len(i["ids"]))[:2]]
    for item in data["items"]:
        item["style"] = np.asarray(item["style"], dtype=np.float32)
    return data


def record(path: Path, model_dir: Path) -> None:
    """Token ids, style rows and the real model's durations for SENTENCES, with config.json."""
    from tts_server.engine.factory import build_synthesizer

    synthesizer = build_synthesizer("torch", "cpu", str(model_dir), languages=list(SENTENCES))
    items = []
    for language, sentences in SENTENCES.items():
        style = synthesizer.voice_book(language).resolve("default")
        for text in sentences:
            for job in synthesizer.prepare(text, 0, len(text), style, 1.0, language).jobs:
                inference = synthesizer.backend.infer(job.ids, job.style, 1.0)
                items.append({"language": language, "text": text, "ids": list(job.ids),
                              "durations": [int(d) for d in inference.durations],
                              "style": [round(float(v), 5) for v in job.style]})
    config = json.loads((model_dir / "config.json").read_text())
    path.write_text(json.dumps({"config": config, "items": items}, ensure_ascii=False) + "\n")
    print(f"{path}: {len(items)} items, {sum(sum(i['durations']) for i in items) * 0.025:.1f} s of audio")
