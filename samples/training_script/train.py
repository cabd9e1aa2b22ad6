"""Train the thumbnail CNN on synthetic data, then save it every way we used to.

Usage: python train.py [--out DIR] [--epochs N] [--arch simple|residual]
"""
import argparse
import os
import random
import tempfile

import numpy as np
import tensorflow as tf
from tensorflow import keras

from models import ARCHITECTURES, IMG_SIZE, NUM_CLASSES

BATCH_SIZE = 16


def make_synthetic_data(n=128, seed=0):
    rng = np.random.RandomState(seed)
    images = rng.randint(0, 256, size=(n, 20, 20, 3)).astype("uint8")
    labels = rng.randint(0, NUM_CLASSES, size=(n,)).astype("int32")
    return images, labels


def preprocess(image, label):
    image = tf.image.convert_image_dtype(image, tf.float32)  # uint8 -> [0, 1]
    image = tf.image.resize(image, (IMG_SIZE, IMG_SIZE))
    image = tf.image.random_flip_left_right(image)
    return image, tf.cast(label, tf.int64)


def make_dataset(images, labels, training=True):
    ds = tf.data.Dataset.from_tensor_slices((images, labels)).map(preprocess)
    if training:
        ds = ds.shuffle(256)
    return ds.batch(BATCH_SIZE).prefetch(tf.data.experimental.AUTOTUNE)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=None, help="output folder (default: a temp dir)")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--arch", choices=sorted(ARCHITECTURES), default="simple")
    args = parser.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="thumbnail_cnn_")
    os.makedirs(out, exist_ok=True)

    # seed everything for reproducible runs
    random.seed(42)
    np.random.seed(42)
    tf.random.set_seed(42)

    images, labels = make_synthetic_data()
    train_ds = make_dataset(images[:96], labels[:96])
    val_ds = make_dataset(images[96:], labels[96:], training=False)

    model = ARCHITECTURES[args.arch]()
    optimizer = keras.optimizers.Adam(learning_rate=1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    train_acc = keras.metrics.SparseCategoricalAccuracy()

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss_value = loss_fn(y, logits)
        grads = tape.gradient(loss_value, model.trainable_weights)
        optimizer.apply_gradients(zip(grads, model.trainable_weights))
        train_acc.update_state(y, logits)
        return loss_value

    # custom training loop
    for epoch in range(args.epochs):
        for step, (x, y) in enumerate(train_ds):
            loss_value = train_step(x, y)
        print("epoch %d: loss=%.4f acc=%.4f" % (epoch, float(loss_value), float(train_acc.result())))
        train_acc.reset_states()

    # ... then a few more epochs with fit + checkpointing
    model.compile(optimizer=optimizer, loss=loss_fn, metrics=["accuracy"])
    checkpoint = keras.callbacks.ModelCheckpoint(
        os.path.join(out, "best.h5"), monitor="val_loss", save_best_only=True)
    model.fit(train_ds, validation_data=val_ds, epochs=args.epochs, callbacks=[checkpoint],
              verbose=2)

    # save every which way
    model.save(os.path.join(out, "model.h5"))                    # HDF5
    model.save(os.path.join(out, "saved_model_dir"))             # SavedModel (TF default)
    model.save_weights(os.path.join(out, "ckpt", "weights"))     # TF checkpoint
    tf.saved_model.save(model, os.path.join(out, "export_dir"))  # for TF Serving

    restored = keras.models.load_model(os.path.join(out, "model.h5"))
    x_val = next(iter(val_ds))[0]
    diff = np.max(np.abs(restored.predict(x_val, verbose=0) - model.predict(x_val, verbose=0)))
    print("reload max abs diff: %g" % diff)
    print("artifacts in", out)


if __name__ == "__main__":
    main()
