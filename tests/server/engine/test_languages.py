"""Language codes and aliases, voice prefixes, and the lazily built G2P per language."""

from __future__ import annotations

import threading

import pytest

from tts_server.engine.languages import CODES, VOICE_LETTERS, G2PCache, canonical, implied_by_voice
from tts_server.wire.errors import FieldError


@pytest.mark.parametrize(
    ("alias", "code"),
    [
        ("en", "en-US"),
        ("en-us", "en-US"),
        ("en_US", "en-US"),
        (" EN-US ", "en-US"),
        ("en-GB", "en-GB"),
        ("en_gb", "en-GB"),
        ("en-IN", "en-GB"),
        ("es", "es"),
        ("es-ES", "es"),
        ("es_MX", "es"),
        ("fr-FR", "fr"),
        ("hi-IN", "hi"),
        ("it-IT", "it"),
        ("ja-JP", "ja"),
        ("JA", "ja"),
        ("pt", "pt-BR"),
        ("pt-br", "pt-BR"),
        ("pt_BR", "pt-BR"),
        ("zh-CN", "zh"),
        ("zh-Hans", "zh"),
        ("zh_hans", "zh"),
    ],
)
def test_aliases_resolve_to_canonical_codes(alias, code):
    assert canonical(alias) == code


def test_every_canonical_code_resolves_to_itself():
    assert [canonical(code) for code in CODES] == list(CODES)
    assert CODES == ("en-US", "en-GB", "es", "fr", "hi", "it", "ja", "pt-BR", "zh")


@pytest.mark.parametrize("value", ["de", "ko", "english", "", "en-", "bn-IN", None, 7])
def test_an_unknown_language_names_the_accepted_codes(value):
    with pytest.raises(FieldError) as raised:
        canonical(value)
    assert raised.value.field == "language"
    assert raised.value.message == (
        "Input should be 'en-US', 'en-GB', 'es', 'fr', 'hi', 'it', 'ja', 'pt-BR' or 'zh'"
        f" (or an alias such as 'en', 'pt', 'hi-IN'), got {value!r}"
    )


def test_a_language_the_engine_cannot_speak_names_the_ones_it_can():
    assert canonical("ja-JP", ["ja"]) == "ja"
    with pytest.raises(FieldError) as raised:
        canonical("en", ["ja", "zh"])
    assert raised.value.message == "Input should be 'ja' or 'zh' (or an alias such as 'en', 'pt', 'hi-IN'), got 'en'"


@pytest.mark.parametrize(
    ("voice", "code"),
    [
        ("af_heart", "en-US"),
        ("am_adam", "en-US"),
        ("bf_emma", "en-GB"),
        ("ef_dora", "es"),
        ("ff_siwis", "fr"),
        ("hm_omega", "hi"),
        ("if_sara", "it"),
        ("jf_alpha", "ja"),
        ("jf_alpha:0.7+jm_kumo:0.3", "ja"),
        ("pm_alex", "pt-BR"),
        ("zf_xiaobei", "zh"),
        ("default", None),
        ("woman-1", None),
        ("xf_unknown", None),
        (None, None),
    ],
)
def test_a_voice_id_implies_its_language(voice, code):
    assert implied_by_voice(voice) == code


def test_voice_letters_follow_kokoros_voice_ids():
    assert VOICE_LETTERS == {
        "en-US": "a", "en-GB": "b", "es": "e", "fr": "f", "hi": "h", "it": "i", "ja": "j", "pt-BR": "p", "zh": "z",
    }


def test_each_language_builds_its_g2p_once_even_when_asked_concurrently():
    builds = []
    started, release = threading.Event(), threading.Event()

    def slow_factory():
        builds.append(threading.get_ident())
        started.set()
        release.wait(5)
        return object()

    cache = G2PCache({"es": slow_factory, "fr": lambda: "fr-g2p"})
    results = []
    threads = [threading.Thread(target=lambda: results.append(cache.get("es"))) for _ in range(4)]
    for thread in threads:
        thread.start()
    assert started.wait(5)
    # Another language is not held up while the slow one is being built.
    assert cache.get("fr") == "fr-g2p"
    release.set()
    for thread in threads:
        thread.join(5)
    assert len(builds) == 1
    assert len(results) == 4 and all(r is results[0] for r in results)
    assert cache.loaded() == ["es", "fr"]


def test_asking_for_a_language_without_a_g2p_is_a_field_error():
    with pytest.raises(FieldError) as raised:
        G2PCache({"ja": lambda: None}).get("en-US")
    assert raised.value.message == "Input should be 'ja'"


@pytest.fixture(scope="module")
def g2ps() -> G2PCache:
    return G2PCache()


@pytest.mark.parametrize("code", ["es", "fr", "hi", "it", "pt-BR"])
def test_the_cached_g2p_of_a_language_reports_its_code_and_is_reused(g2ps, code):
    g2p = g2ps.get(code)
    assert g2p.language == code
    assert g2ps.get(code) is g2p
    assert "".join(p.phonemes for p in g2p("1")).strip()  # reads a digit in that language
