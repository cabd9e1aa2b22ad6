"""KM2xx: TensorFlow ops inside model code -> ``keras.ops`` (the ops catalog, interpreted).

The knowledge lives in ``rules/ops_catalog/`` (a table). This package binds a call's
arguments to the TF signature of its catalog entry, translates argument values
(``"SAME"`` -> ``"same"``, ``tf.float32`` -> ``"float32"``, ``[1, s, s, 1]`` -> ``s``),
and either builds an edit plan or says why the call must be ported by hand:

- KM201 ``tf-op-to-keras-ops``: a call with an exact rewrite at this site (fixable);
- KM202 ``tf-op-manual-port``: a call with no rewrite at this site, with the reason;
- KM203 ``tf-variable-in-layer``: ``tf.Variable`` / ``K.variable`` state in a layer;
- KM204 ``tf-dtype-and-shape-helpers``: ``tf.float32`` constants, ``x.shape.as_list()``,
  ``x.get_shape()``.

Rewrites happen in model code only (``Context.MODEL``). Outside it the TF call works
as it is (TensorFlow stays installed for tf.data), so KM201/KM202 report an info
finding without a fix in ``other`` code and nothing in ``data`` or ``training-loop``
code.

One rule per module; the catalog's interpreter, which KM108 uses too, lives in
:mod:`kmigrate.rules.common.catalog`: ``binding`` (arguments), ``translators`` (values),
``plan`` and ``builders`` (rewrites), and ``catalog_rule`` (what KM201 and KM202 share).
"""
