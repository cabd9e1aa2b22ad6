"""Ops catalog section "Signal processing": data only."""

from __future__ import annotations

from kmigrate.rules.ops_catalog._model import manual, op
from kmigrate.rules.ops_catalog._wording import COMPLEX

SIGNAL = [
    op(
        "tf.signal.hann_window",
        "window_length, periodic=True, dtype=tf.float32, name=None",
        builder="window",
        accept={"dtype": ["float32"]},
        when="`periodic` is a literal (True: ops.hanning(n + 1)[:-1], TF's default)",
    ),
    op(
        "tf.signal.hamming_window",
        "window_length, periodic=True, dtype=tf.float32, name=None",
        builder="window",
        accept={"dtype": ["float32"]},
        when="`periodic` is a literal (True: ops.hamming(n + 1)[:-1], TF's default)",
    ),
    op(
        "tf.signal.frame",
        "signal, frame_length, frame_step, pad_end=False, pad_value=0, axis=-1, name=None",
        "extract_sequences",
        "signal, frame_length, frame_step",
    ),
    manual(
        "tf.signal.fft tf.signal.ifft tf.signal.fft2d tf.signal.ifft2d tf.signal.fft3d "
        "tf.signal.ifft3d tf.signal.rfft tf.signal.irfft tf.signal.rfft2d tf.signal.irfft2d",
        COMPLEX,
        "ops.fft((real, imag)) / ops.rfft(x) return (real, imag); keep the pair instead of "
        "a complex tensor",
    ),
    manual(
        "tf.signal.stft tf.signal.inverse_stft",
        "keras.ops.stft returns (real, imag), centers frames by default and takes the window "
        "by name. " + COMPLEX,
        'ops.stft(x, frame_length, frame_step, fft_length, window="hann", center=False)',
    ),
    manual(
        "tf.signal.dct tf.signal.idct tf.signal.mdct tf.signal.inverse_mdct",
        "no keras.ops DCT",
        "a DCT matrix applied with ops.matmul",
    ),
    manual(
        "tf.signal.linear_to_mel_weight_matrix tf.signal.mfccs_from_log_mel_spectrograms",
        "no keras.ops equivalent",
        "keras.layers.MelSpectrogram, or precompute the matrix with NumPy",
    ),
    manual(
        "tf.signal.overlap_and_add",
        "no keras.ops equivalent",
        "ops.istft, or ops.segment_sum over frame positions",
    ),
    manual(
        "tf.signal.fftshift tf.signal.ifftshift",
        "no keras.ops equivalent",
        "ops.roll(x, n // 2, axis) per axis",
    ),
    manual(
        "tf.signal.kaiser_window tf.signal.kaiser_bessel_derived_window tf.signal.vorbis_window",
        "TF windows are periodic/derived variants of NumPy's",
        "ops.kaiser(n, beta) is NumPy's symmetric window",
    ),
]
