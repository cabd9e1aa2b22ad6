"""KM4xx: saving and loading. Keras 3 writes whole models as ``.keras``, weights as
``.weights.h5``, and SavedModels for serving with ``model.export(dir)``.

Legacy code saves to ``.h5`` files, SavedModel folders (a path without suffix) and TF
checkpoints (``save_weights("ckpt")``). Keras 3 refuses to write the last two and
cannot read them back; ``.h5`` still loads but is a legacy format. A save is only half
the story: the ``load_model`` / ``load_weights`` that reads the file must change with
it. The rules here collect every writer and reader of a module during the walk and
pair them in ``check_module`` by path, so one fix rewrites both ends or neither.

One rule per module; the shared parts are ``_paths`` (the literal part of a path),
``_uses`` (which calls save or load, and what they need) and ``_pairing`` (writers paired
with readers, and the base rule that collects them).
"""
