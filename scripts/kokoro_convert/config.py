"""kokoro's config.json for Kokoro-82M (the keys and values of hexgrad/Kokoro-82M's).

The dimensions are checked against the export: every converted tensor must have the
shape that a model built from this config expects (state_dict.convert asserts it).
"""

from __future__ import annotations

from collections.abc import Mapping

ISTFTNET = {
    "upsample_kernel_sizes": [20, 12],
    "upsample_rates": [10, 6],
    "gen_istft_hop_size": 5,
    "gen_istft_n_fft": 20,
    "resblock_dilation_sizes": [[1, 3, 5], [1, 3, 5], [1, 3, 5]],
    "resblock_kernel_sizes": [3, 7, 11],
    "upsample_initial_channel": 512,
}
PLBERT = {
    "hidden_size": 768,
    "num_attention_heads": 12,
    "intermediate_size": 2048,
    "max_position_embeddings": 512,
    "num_hidden_layers": 12,
    "dropout": 0.1,
}


def kokoro_config(vocab: Mapping[str, int]) -> dict:
    return {
        "istftnet": ISTFTNET,
        "dim_in": 64,
        "dropout": 0.2,
        "hidden_dim": 512,
        "max_conv_dim": 512,
        "max_dur": 50,
        "multispeaker": True,
        "n_layer": 3,
        "n_mels": 80,
        "n_token": 178,
        "style_dim": 128,
        "text_encoder_kernel_size": 5,
        "plbert": PLBERT,
        "vocab": dict(vocab),
    }
