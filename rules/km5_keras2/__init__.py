"""KM5xx: Keras 2 APIs that changed or vanished in Keras 3, one rule per module.

Signatures and behaviours are taken from the installed sources: Keras 3.15
(``keras/src/layers/layer.py``, ``keras/src/optimizers/base_optimizer.py``,
``keras/src/trainers/trainer.py``) and TF-Keras 2.21 (``tf_keras/src/engine``,
``tf_keras/src/optimizers``, ``tf_keras/src/backend.py``). Each rule rewrites only
what maps exactly and says why when it does not. Shared tables and helpers are in
:mod:`kmigrate.rules.common.keras2_classes`.
"""
