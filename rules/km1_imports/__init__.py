"""KM1xx: imports and namespaces. ``tf.keras`` becomes ``keras``; Keras 2 module paths
that moved or vanished in Keras 3 are mapped or reported.

``K.*`` backend *functions* are not handled here: the ops catalog (KM2xx) owns them;
KM102 only moves the ``backend`` namespace import.
"""
