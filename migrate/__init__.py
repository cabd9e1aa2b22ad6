"""kmigrate: move TensorFlow / Keras 2 code to multi-backend Keras 3."""

__version__ = "0.1.0"
