"""KM3xx: random numbers. ``tf.random`` inside layers becomes ``keras.random`` fed by a
``keras.random.SeedGenerator`` that the layer owns.

Keras 3 random functions are stateless: the state lives in a ``SeedGenerator`` whose
``seed=`` is passed to every draw. In a layer that generator must be an attribute
(``self.seed_generator``) so the layer tracks its state variable: that is what makes
the draws work under ``jax.jit`` and ``torch.compile`` and what ``.keras`` saving
round-trips (through the layer's ``seed`` argument).

The mapping is a table (``TF_RANDOM``, ``BACKEND_RANDOM``, ``NUMPY_RANDOM``): for each
source function its signature in positional order, the ``keras.random`` target, the
argument renames, and the arguments the rewrite must spell out because the defaults
differ (``tf.random.categorical`` returns int64, ``keras.random.categorical`` int32).
What the table cannot express exactly is reported for a manual port, with the reason.

One rule per module; the table is ``_table``, one call's rewrite ``_rewrite``, and the
layer's ``SeedGenerator`` ``_seed_generator``.
"""
