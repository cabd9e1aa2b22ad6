"""The bytes that tell whether a source file may set the Keras backend.

Kept apart from :mod:`kmigrate.project.backend_pins` (which parses what it finds) so
that the runner can note, on the bytes it reads anyway, whether a file needs looking at
(``FileReport.mentions_backend``, stored with its cached result): the report's search for
backend pins then reads again only the few files that name a backend variable.
"""

from __future__ import annotations

from kmigrate.engine.run_data import BACKEND_VARIABLE, LEGACY_VARIABLE

VARIABLES = (BACKEND_VARIABLE, LEGACY_VARIABLE)
# Bytes a source file must contain to be parsed for pins.
SOURCE_MARKERS = tuple(v.encode() for v in (*VARIABLES, "set_backend"))


def mentions_backend(data: bytes) -> bool:
    """Whether a source file's bytes name a backend variable or ``set_backend``."""
    return any(marker in data for marker in SOURCE_MARKERS)
