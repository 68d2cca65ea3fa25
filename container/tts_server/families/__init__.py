"""The client families, one package each: a family's fields, vendor tables, WebSocket dialect and
HTTP answer all live in its package. To add one, write its package and register it here.

Asked in order (the first that claims a query, a first message or a body answers it); the
canonical protocol answers everything else. Bulbul comes before the blog shape: a body with
Bulbul's field names is Bulbul's even when it also has the blog's `voice`.
"""

from __future__ import annotations

from ..transport.family import Families
from . import blog, bulbul, canonical, cartesia, deepgram, elevenlabs, openai

# Cartesia before ElevenLabs and the blog: its requests carry `context_id` and `generation_config`
# (ElevenLabs' first-message fields) and its bodies a `voice` (the blog's).
REGISTERED = Families([openai.FAMILY, bulbul.FAMILY, cartesia.FAMILY, elevenlabs.FAMILY, deepgram.FAMILY, blog.FAMILY],
                      default=canonical.FAMILY)
