"""TensorFlow 1's resizes (``tf.compat.v1.image.resize_images`` and its aliases) ->
the project helper ``tf1_resize`` (rules/data/keras2_compat.py), which keeps their
pixel mapping (no half-pixel centers; ``align_corners``) on keras.ops.

``keras.ops.image.resize`` maps pixels with half-pixel centers, so its values differ
for most size changes; the helper reads TensorFlow 1's source positions with ops.take
and interpolates them in float32 as TensorFlow's kernels do (equal to the last bit on
tensorflow, jax and torch: tests/rules/test_tf1_resize_backends.py). The method must be
visible (bilinear or nearest; bicubic and area stay manual), ``align_corners`` a
literal, and ``half_pixel_centers`` / ``preserve_aspect_ratio`` absent or False.
"""

from __future__ import annotations

from kmigrate.engine import MISSING, EditPlan, ReplaceNode
from kmigrate.rules.common.catalog.binding import Binding, ManualPortError
from kmigrate.rules.common.catalog.plan import Rewrite, check_conditions
from kmigrate.rules.common.compat_helpers import (
    HELPER_FILE,
    HELPER_MODULE,
    helper_edit,
    helper_name_taken,
)
from kmigrate.rules.common.static_shapes import stacked_tuple
from kmigrate.rules.ops_catalog import py_literal

HELPER = "tf1_resize"
# The method each function resizes with when it takes no `method` argument.
_FIXED_METHOD = {
    "tf.compat.v1.image.resize_bilinear": "bilinear",
    "tf.compat.v1.image.resize_nearest_neighbor": "nearest",
}
# resize_images / resize return the images as they are when the size does not change.
_SKIPS_SAME_SIZE = frozenset({"tf.compat.v1.image.resize_images", "tf.compat.v1.image.resize"})
# ResizeMethodV1 values (ints) and ResizeMethod values (strings) resize_images accepts.
_METHODS = {0: "bilinear", 1: "nearest", "bilinear": "bilinear", "nearest": "nearest"}
_METHOD_NAMES = {"BILINEAR": "bilinear", "NEAREST_NEIGHBOR": "nearest"}
_REFUSED_METHOD = (
    "TensorFlow 1's bicubic and area resizes have no keras.ops form with its pixel mapping",
    "keep TensorFlow for this resize, or ops.image.resize(x, size, interpolation=...) "
    "where the model is retrained (half-pixel centers change the values)",
)


def build_tf1_resize(binding: Binding) -> Rewrite:
    check_conditions(binding)
    site = binding.site
    method = _FIXED_METHOD.get(site.symbol) or _method(binding)
    align = binding.literal("align_corners")
    if align is MISSING:
        align = False
    if not isinstance(align, bool):
        raise ManualPortError(
            f"`align_corners={binding.text('align_corners')}` is not a literal True/False",
            "pass align_corners as a Python bool",
        )
    if helper_name_taken(site, HELPER):
        raise ManualPortError(
            f"the module uses the name `{HELPER}` itself, so the helper with TensorFlow 1's "
            "resize cannot be imported under it",
            f"copy `{HELPER}` from {HELPER_FILE.name} in kmigrate's rules/data under another name",
        )
    size = stacked_tuple(site, binding.node("size")) or binding.text("size")  # type: ignore[arg-type]
    items = [binding.text("images"), size, py_literal(method)]
    if align:
        items.append("align_corners=True")
    if site.symbol in _SKIPS_SAME_SIZE:
        items.append("skip_same_size=True")
    text = f"{HELPER}({', '.join(items)})"
    plan = EditPlan((ReplaceNode(site.span, text), helper_edit(site, HELPER)))
    return Rewrite(plan, f"{HELPER_MODULE}.{HELPER}")


def _method(binding: Binding) -> str:
    if not binding.given("method"):
        return "bilinear"
    literal = binding.literal("method")
    if isinstance(literal, (int, str)) and not isinstance(literal, bool):
        found = _METHODS.get(literal.lower() if isinstance(literal, str) else literal)
        if found is None:
            raise ManualPortError(*_REFUSED_METHOD)
        return found
    symbol = binding.site.module.resolve(binding.node("method")) or ""  # type: ignore[arg-type]
    owner, _, member = symbol.rpartition(".")
    if owner.startswith("tf.") and owner.endswith("ResizeMethod"):
        if member in _METHOD_NAMES:
            return _METHOD_NAMES[member]
        raise ManualPortError(*_REFUSED_METHOD)
    raise ManualPortError(
        f"`method={binding.text('method')}` is not a literal or a ResizeMethod constant",
        "write the method as tf.compat.v1.image.ResizeMethod.BILINEAR or NEAREST_NEIGHBOR",
    )
