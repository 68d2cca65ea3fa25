"""Production backend: PyTorch Kokoro-82M from the deployed weights (MODEL_DIR), fp32.

kokoro 0.9.4's KModel holds the modules; its loader silently falls back to a non-strict
load, so the state dict is loaded again strictly here: a tensor that does not fit is a
load error naming the file, never a model that speaks noise.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping, Sequence

import numpy as np

# torch's OpenMP (libgomp) reads these when torch loads. By default a thread that waits between
# two operations soon sleeps, and a window's hundreds of small convolutions each pay its wake-up:
# here it spins for up to 3M rounds first, then sleeps as before, so an idle server still takes
# no CPU (measured on 2 cores: 0.01 CPU-s in 5 idle s; ACTIVE alone spins a core for good).
# The first window's decode measured 209 -> 168 ms, the front part 84 -> 57 ms (docs/performance.md).
os.environ.setdefault("OMP_WAIT_POLICY", "ACTIVE")
os.environ.setdefault("GOMP_SPINCOUNT", "3000000")
import torch  # after the OpenMP settings above: it reads them as it loads

from . import span_norm, windows
from .backend import SAMPLES_PER_DURATION_UNIT, Front, Inference, Interrupted, RunControl
from .batched_forward import forward_batch
from .model_dir import ModelDir, ModelDirError

log = logging.getLogger(__name__)
REPO_ID = "hexgrad/Kokoro-82M"  # only names the architecture: nothing is downloaded


def pick_device(requested: str) -> str:
    """DEVICE=auto|cuda|cpu -> the torch device this process can really use."""
    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if requested == "cuda" and not torch.cuda.is_available():
        # Never a silent CPU fallback: a GPU deploy sets DEVICE=cuda, and /ping stays 503 with this.
        raise ModelDirError(f"DEVICE=cuda: no CUDA device is available ({_cuda_problem()}); on SageMaker, "
                            "check that the instance type has a GPU and its inference AMI's NVIDIA driver "
                            "supports this torch build; DEVICE=cpu runs on the CPU on purpose")
    return requested


def _cuda_problem() -> str:
    """Why CUDA is unusable, in torch's words (no driver, a driver too old, no device)."""
    if torch.version.cuda is None:
        return f"torch {torch.__version__} is built without CUDA"
    try:
        torch.cuda.init()
    except Exception as error:  # noqa: BLE001 - its message is the reason
        return f"torch {torch.__version__} for CUDA {torch.version.cuda}: {' '.join(str(error).split())}"
    return f"torch {torch.__version__} for CUDA {torch.version.cuda} finds {torch.cuda.device_count()} devices"


class TorchBackend:
    name = "kokoro-82m-torch-fp32"
    precision = "fp32"  # no autocast: true fp32 on CUDA too (TF32 off, below)
    # Half the lead silence windows.LEAD_FRAMES asks for, its statistics counted as the whole lead's
    # (decode, span_norm.FrameWeights.for_frames): 4 frames less of first audio's decode, and
    # over the speech corpus the listener heard it as the full lead (docs/performance.md).
    first_window_lead = windows.LEAD_FRAMES // 2
    # Pieces of different sessions per model run at most (batched_forward.py); MAX_BATCH overrides.
    # The scheduler uses only the sizes that its warm-up timings show pay. None does on a CPU
    # (docs/batching.md), and profiling batches of 2 and 4 there cost 10-60 s of every cold
    # start (docs/benchmarks.md, "Image and cold start"): 1 unless MAX_BATCH asks for more.
    DEFAULT_MAX_BATCH = {"cuda": 16, "cpu": 1}

    def __init__(self, model_dir: ModelDir, device: str = "auto", threads: int | None = None):
        """`model_dir` as ModelDir.check() passed it (build_backend checks it before the imports)."""
        from kokoro import KModel  # imported here: it pulls in transformers, seconds of start-up

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
        fold_weight_norm(model)
        self._span = span_norm.install(model.decoder)  # a speech span decoded as loud as its piece (span_norm.py)
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

    def front(self, token_ids: Sequence[int], style: np.ndarray, speed: float,
              control: RunControl | None = None) -> Front:
        """kokoro's forward_with_tokens up to its decoder: durations, then text features, pitch and
        energy per frame (the very tensors its decoder would get)."""
        model = self.model
        ids = torch.tensor([[0, *token_ids, 0]], dtype=torch.long, device=self.device)
        ref_s = torch.from_numpy(np.asarray(style, dtype=np.float32).reshape(1, 256)).to(self.device)
        self._control = control
        try:
            with torch.inference_mode():
                lengths = torch.full((1,), ids.shape[1], dtype=torch.long, device=self.device)
                text_mask = torch.zeros_like(ids, dtype=torch.bool)
                bert = model.bert(ids, attention_mask=(~text_mask).int())
                d = model.predictor.text_encoder(model.bert_encoder(bert).transpose(-1, -2), ref_s[:, 128:], lengths,
                                                 text_mask)
                x, _ = model.predictor.lstm(d)
                duration = torch.sigmoid(model.predictor.duration_proj(x)).sum(dim=-1) / speed
                durations = torch.round(duration).clamp(min=1).long().reshape(-1)
                frame_token = torch.repeat_interleave(torch.arange(ids.shape[1], device=self.device), durations)
                alignment = torch.zeros((ids.shape[1], len(frame_token)), device=self.device)
                alignment[frame_token, torch.arange(len(frame_token), device=self.device)] = 1
                f0, energy = model.predictor.F0Ntrain(d.transpose(-1, -2) @ alignment[None], ref_s[:, 128:])
                asr = model.text_encoder(ids, lengths, text_mask) @ alignment[None]
        finally:
            self._control = None
        frames = len(frame_token)
        per_frame = energy[0, : 2 * frames].reshape(frames, 2).mean(dim=1).cpu().numpy()
        return Front(durations.cpu().numpy(), _Features(asr, f0, energy, ref_s[:, :128]), per_frame)

    def statistics(self, front: Front, control: RunControl | None = None) -> tuple[np.ndarray, span_norm.Statistics]:
        """The piece's whole decode and its instance-norm statistics (a voice's reference, given to
        its first pieces' windows: decode)."""
        self._span.recording = [None] * self._span.norms
        try:
            audio = self.decode(front, 0, front.frames, control)
            assert None not in self._span.recording, "a norm of the decoder did not run"
            return audio, span_norm.Statistics(tuple(self._span.recording))
        finally:
            self._span.recording = None

    def decode(self, front: Front, start: int, end: int, control: RunControl | None = None,
               norms: span_norm.Statistics | None = None) -> np.ndarray:
        """kokoro's decoder over frames [start, end), its harmonic source the slice of the piece's own;
        its instance norms given `norms` (a voice's reference statistics) where they are given, else
        the statistics of a speech span weighted to the piece's share of silence, and those of a
        first window to the share a lead of windows.LEAD_FRAMES would give (span_norm.py)."""
        features: _Features = front.features
        generator = self.model.decoder.generator
        self._control = control
        lead = int(front.durations[0])
        # A first window starts in the model's lead silence: its statistics as from the whole lead.
        lead_from = max(0, lead - windows.LEAD_FRAMES) if start < lead else None
        if norms is None:
            self._span.weights = span_norm.FrameWeights.for_frames(front.energy, front.frames, start, end, lead_from)
        self._span.given = norms
        try:
            with torch.inference_mode():
                unit = SAMPLES_PER_DURATION_UNIT
                if features.source is None or features.source.shape[1] < end * unit:
                    features.source = _source(generator, features, end * unit if features.source is None else None)
                own, generator.m_source = generator.m_source, _GivenSource(features.source[:, start * unit : end * unit])
                try:
                    audio = self.model.decoder(features.asr[:, :, start:end], features.f0[:, 2 * start : 2 * end],
                                               features.energy[:, 2 * start : 2 * end], features.style)
                finally:
                    generator.m_source = own
        finally:
            self._control = None
            self._span.weights = self._span.given = None
        return audio.reshape(-1).float().cpu().numpy()

    def infer_batch(self, items: Sequence[tuple[Sequence[int], np.ndarray, float]],
                    control: RunControl | None = None) -> list[Inference]:
        """Pieces of different sessions in one padded batch, each equal to its batch-1 result."""
        self._control = control
        try:
            rows = forward_batch(self.model, list(items))
        finally:
            self._control = None
        return [Inference(audio=audio, durations=durations) for audio, durations in rows]


def _source(generator, features: _Features, samples: int | None) -> torch.Tensor:
    """The piece's harmonic source, (1, samples, 1): its first `samples` (None: all), after what
    was drawn already. Each window continues its phase and noise, and a first window draws only
    its own part: the source of a sample depends on the pitch steps up to the one after it (the
    phase is a running sum over the steps, and each sample interpolates between two of them), so
    a part drawn over the steps up to one past its end is the start of the whole draw (its noise
    aside: drawn anew either way)."""
    f0 = features.f0
    if samples is not None:
        step = generator.m_source.l_sin_gen.upsample_scale  # samples per pitch step
        f0 = f0[:, : -(-samples // step) + 1]
    source = generator.m_source(generator.f0_upsamp(f0[:, None]).transpose(1, 2))[0]
    if samples is not None:
        return source[:, :samples]
    drawn = features.source
    return source if drawn is None else torch.cat([drawn, source[:, drawn.shape[1]:]], dim=1)


class _Features:
    """What kokoro's decoder reads for a piece, and as much of its harmonic source as its windows drew."""

    def __init__(self, asr, f0, energy, style):
        self.asr, self.f0, self.energy, self.style = asr, f0, energy, style
        self.source: torch.Tensor | None = None  # (1, samples, 1)


class _GivenSource(torch.nn.Module):
    """Stands in for the generator's harmonic source module during one window's decode."""

    def __init__(self, source: torch.Tensor):
        super().__init__()
        self.source = source

    def forward(self, f0):
        return self.source, None, None


def fold_weight_norm(model: torch.nn.Module) -> torch.nn.Module:
    """kokoro's convolutions keep weight norm (a direction and a magnitude) and recompute their
    weight from both on every call: at inference that is a fixed cost per model call, about 0.4 s
    on a 2-core CPU, which a first window pays on top of its frames. Computed once here, with
    the same formula, so every output stays what it was. Returns the model, folded in place."""
    for module in list(model.modules()):  # a list: removing a parametrization edits the tree
        if hasattr(module, "weight_g") and hasattr(module, "weight_v"):
            torch.nn.utils.remove_weight_norm(module)
        elif torch.nn.utils.parametrize.is_parametrized(module, "weight"):
            torch.nn.utils.parametrize.remove_parametrizations(module, "weight")
    return model


def _voice_pack(path) -> np.ndarray:
    try:
        pack = torch.load(path, map_location="cpu", weights_only=True)
        values = pack.float().numpy().reshape(-1, 256)
    except Exception as error:  # noqa: BLE001 - any failure here is "not a voice pack"
        reason = " ".join(str(error).split())[:200]
        raise ModelDirError(f"{path}: not a voice pack of (rows, 1, 256) float values ({reason})") from None
    return values
