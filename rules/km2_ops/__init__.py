"""KM2xx: TensorFlow ops inside model code -> ``keras.ops`` (the ops catalog, interpreted).

The knowledge lives in ``rules/ops_catalog/`` (a table). This package binds a call's
arguments to the TF signature of its catalog entry, translates argument values
(``"SAME"`` -> ``"same"``, ``tf.float32`` -> ``"float32"``, ``[1, s, s, 1]`` -> ``s``),
and either builds an edit plan or says why the call must be ported by hand:

- KM201 ``tf-op-to-keras-ops``: a call with an exact rewrite at this site (fixable);
- KM202 ``tf-op-manual-port``: a call with no rewrite at this site, with the reason;
- KM203 ``tf-variable-in-layer``: ``tf.Variable`` / ``K.variable`` state in a layer;
- KM204 ``tf-dtype-and-shape-helpers``: ``tf.float32`` constants, ``x.shape.as_list()``,
  ``x.get_shape()``;
- KM207 ``tensor-array-use``: each use of a ``tf.TensorArray`` that stays (the static
  loop form is KM201's, with every use in one fix).

Rewrites happen in model code only (``Context.MODEL``: in a project that uses Keras,
all code not proven TensorFlow by design). In ``undecided`` code (reached from model code
and from a data pipeline) KM201/KM202/KM205 report without a fix; in code of a module
without Keras (``other``) KM201/KM202 report an info finding; TensorFlow calls in proven
``data``, ``training-loop``, ``serving`` or ``distribution`` code stay as they are
(Keras 2 backend calls there are KM108's).

One rule per module; the catalog's interpreter, which KM108 uses too, lives in
:mod:`kmigrate.rules.common.catalog`: ``binding`` (arguments), ``translators`` (values),
``plan`` and ``builders`` (rewrites), and ``catalog_rule`` (what KM201 and KM202 share).
"""
