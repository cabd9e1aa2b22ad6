"""KM6xx: code that is backend-specific by structure. Reported; the one rewrite is
dropping ``@tf.function`` from a layer's method where that is exact (KM602).

A hand-written ``GradientTape`` loop, a ``tf.function``, a ``tf.distribute`` strategy
or a ``tf.py_function`` is TensorFlow by design: there is no call-for-call rewrite to
JAX or PyTorch. What matters is *where* it is. In a data pipeline or a TF-only
training script it is fine (info at most); inside a layer's ``call`` it breaks the
model on the other backends (error). Each finding names the portable alternative.

One rule per module; shared text in :mod:`kmigrate.rules.common.training_loop`.
"""
