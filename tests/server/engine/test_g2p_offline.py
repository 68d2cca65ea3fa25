"""Nothing in the G2Ps touches the network: the endpoint runs with network isolation.

Each check runs in a fresh interpreter (nothing imported yet) with sockets blocked and
spaCy's downloader replaced by a tripwire, then loads and runs the G2P.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]

BLOCK_NETWORK = textwrap.dedent(
    """
    import socket

    attempts = []

    def refuse(*args, **kwargs):
        attempts.append(args)
        raise OSError("network blocked by the test")

    socket.socket.connect = refuse
    socket.socket.connect_ex = refuse
    socket.getaddrinfo = refuse
    socket.create_connection = refuse

    import spacy.cli

    def no_download(*args, **kwargs):
        raise SystemExit(f"spacy.cli.download called with {args}")

    spacy.cli.download = no_download
    """
)


def run_offline(body: str) -> subprocess.CompletedProcess:
    script = BLOCK_NETWORK + textwrap.dedent(body) + "\nassert not attempts, attempts\nprint('OFFLINE OK')\n"
    env = dict(os.environ, PYTHONPATH=f"{REPO}{os.pathsep}{REPO / 'container'}", HF_HUB_OFFLINE="0")
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)


def test_the_blocker_itself_stops_a_connection():
    result = run_offline(
        """
        try:
            socket.create_connection(("127.0.0.1", 9))
        except OSError:
            pass
        attempts.clear()
        """
    )
    assert "OFFLINE OK" in result.stdout, result.stderr


def test_every_g2p_loads_and_runs_without_the_network():
    # One interpreter for all (spaCy and torch imports dominate the time).
    result = run_offline(
        """
        from tts_server.engine.languages import G2PCache

        g2ps = G2PCache()
        # "Zyxqvian" is in no English lexicon: it goes through the espeak fallback.
        text = "Hello Dr. Zyxqvian, it's 3.5 degrees today."
        for code in ("en-US", "en-GB"):
            words = {text[p.start : p.end]: p.phonemes for p in g2ps.get(code)(text) if p.start < p.end}
            assert words["Zyxqvian"] and words["Hello"] and words["3.5"], words

        for code, text in [("es", "Hola."), ("fr", "Bonjour."), ("hi", "नमस्ते।"), ("it", "Ciao."),
                           ("pt-BR", "Olá."), ("zh", "你好。"), ("ja", "こんにちは。")]:
            assert "".join(p.phonemes for p in g2ps.get(code)(text)).strip(), code
        """
    )
    assert "OFFLINE OK" in result.stdout, result.stdout + result.stderr
