"""Production backend: PyTorch Kokoro-82M from the deployed weights (MODEL_DIR), fp32.

kokoro 0.9.4's KModel holds the modules; its loader silently falls back to a non-strict
load, so the state dict is loaded again strictly here: a tensor that does not fit is a
load error naming the file, never a model that speaks noise.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence

import numpy as np
import torch

from .backend import SAMPLES_PER_DURATION_UNIT, Inference, Interrupted, RunControl
from .batched_forward import forward_batch
from .model_dir import ModelDir, ModelDirError

log = logging.getLogger(__name__)
REPO_ID = "hexgrad/Kokoro-82M"  # only names the architecture: nothing is downloaded


def pick_device(requested: str) -> str:
    """DEVICE=auto|cuda|cpu -> the torch device this process can really use."""
    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if requested == "cuda" and not torch.cuda.is_available():
        raise ModelDirError("DEVICE=cuda: no CUDA device is available (use DEVICE=auto or cpu)")
    return requested


class TorchBackend:
    name = "kokoro-82m-torch-fp32"
    # Pieces of different sessions per model run at most (batched_forward.py); MAX_BATCH overrides.
    # The scheduler uses only the sizes that its warm-up timings show pay. None does on a CPU
    # (docs/batching.md), and profiling batches of 2 and 4 there cost 10-60 s of every cold
    # start (docs/benchmarks.md, "Image and cold start"): 1 unless MAX_BATCH asks for more.
    DEFAULT_MAX_BATCH = {"cuda": 16, "cpu": 1}

    def __init__(self, model_dir: ModelDir, device: str = "auto", threads: int | None = None):
        from kokoro import KModel  # imported here: it pulls in transformers, seconds of start-up

        model_dir.check()
        self.device = pick_device(device)
        self.default_max_batch = self.DEFAULT_MAX_BATCH[self.device]
        if self.device == "cpu" and threads:
            torch.set_num_threads(threads)
        if self.device == "cuda":  # true fp32: the vocoder's phase is sensitive to TF32 rounding
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False
        try:
            config = json.loads(model_dir.config.read_text(encoding="utf-8"))
            self.vocab: Mapping[str, int] = config["vocab"]
        except (ValueError, KeyError) as error:
            raise ModelDirError(f"{model_dir.config}: not a Kokoro config ({error})") from None
        try:
            model = KModel(repo_id=REPO_ID, config=config, model=str(model_dir.weights))
            for key, state in torch.load(model_dir.weights, map_location="cpu", weights_only=True).items():
                getattr(model, key).load_state_dict(state, strict=True)
        except Exception as error:  # noqa: BLE001 - any failure here is "this file does not load"
            reason = " ".join(str(error).split())[:300]
            raise ModelDirError(f"{model_dir.weights}: state dict does not load ({reason})") from None
        self.model = model.to(self.device).eval()
        # Interruption: each convolution and LSTM first checks the run's control, so a run stops
        # within one layer (the scheduler's preemption; see scheduler.py).
        self._control: RunControl | None = None
        for module in self.model.modules():
            if isinstance(module, (torch.nn.Conv1d, torch.nn.ConvTranspose1d, torch.nn.LSTM)):
                module.register_forward_pre_hook(self._stop_if_interrupted)
        self.max_tokens = model.context_length - 2  # the two pads
        self._voices = {path.stem: _voice_pack(path) for path in model_dir.voice_files}

    @property
    def voices(self) -> Mapping[str, np.ndarray]:
        return self._voices

    def _stop_if_interrupted(self, module, args) -> None:
        if self._control is not None and self._control.interrupted:
            raise Interrupted

    def infer(self, token_ids: Sequence[int], style: np.ndarray, speed: float,
              control: RunControl | None = None) -> Inference:
        ids = torch.tensor([[0, *token_ids, 0]], dtype=torch.long, device=self.device)
        ref_s = torch.from_numpy(np.asarray(style, dtype=np.float32).reshape(1, 256)).to(self.device)
        self._control = control
        try:
            with torch.inference_mode():
                audio, durations = self.model.forward_with_tokens(ids, ref_s, speed)
        finally:
            self._control = None
        audio = audio.float().cpu().numpy().reshape(-1)
        durations = durations.cpu().numpy().reshape(-1)
        assert len(audio) == SAMPLES_PER_DURATION_UNIT * int(durations.sum()), "audio/durations mismatch"
        return Inference(audio=audio, durations=durations)


    def infer_batch(self, items: Sequence[tuple[Sequence[int], np.ndarray, float]],
                    control: RunControl | None = None) -> list[Inference]:
        """Pieces of different sessions in one padded batch, each equal to its batch-1 result."""
        self._control = control
        try:
            rows = forward_batch(self.model, list(items))
        finally:
            self._control = None
        return [Inference(audio=audio, durations=durations) for audio, durations in rows]


def _voice_pack(path) -> np.ndarray:
    try:
        pack = torch.load(path, map_location="cpu", weights_only=True)
        values = pack.float().numpy().reshape(-1, 256)
    except Exception as error:  # noqa: BLE001 - any failure here is "not a voice pack"
        reason = " ".join(str(error).split())[:200]
        raise ModelDirError(f"{path}: not a voice pack of (rows, 1, 256) float values ({reason})") from None
    return values
