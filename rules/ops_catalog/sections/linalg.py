"""Ops catalog section "Linear algebra": data only."""

from __future__ import annotations

from kmigrate.rules.ops_catalog._model import manual, op
from kmigrate.rules.ops_catalog._wording import COMPLEX

LINALG = [
    op(
        "tf.linalg.matmul tf.matmul",
        "a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False, "
        "a_is_sparse=False, b_is_sparse=False, output_type=None, grad_a=False, grad_b=False, "
        "name=None",
        builder="matmul",
        accept={
            "adjoint_a": [False],
            "adjoint_b": [False],
            "a_is_sparse": [False],
            "b_is_sparse": [False],
            "output_type": [None],
            "grad_a": [False],
            "grad_b": [False],
        },
        when="`transpose_a`/`transpose_b` are literals (True swaps the last two axes of "
        "that operand: ops.swapaxes(b, -1, -2))",
    ),
    op(
        "tf.einsum tf.linalg.einsum",
        "equation, *inputs, name=None",
        "einsum",
        "equation, *inputs",
    ),
    op(
        "tf.tensordot tf.linalg.tensordot",
        "a, b, axes, name=None",
        "tensordot",
        "a, b, axes=axes",
    ),
    op("tf.linalg.inv", "input, adjoint=False, name=None", "inv", "input"),
    op("tf.linalg.det", "input, name=None", "det", "input"),
    op("tf.linalg.slogdet", "input, name=None", "slogdet", "input"),
    op(
        "tf.linalg.logdet",
        "matrix, name=None",
        "logdet",
        "matrix",
        note="For Hermitian positive-definite matrices, as tf.linalg.logdet requires.",
    ),
    op("tf.linalg.cholesky", "input, name=None", "cholesky", "input"),
    op("tf.linalg.solve", "matrix, rhs, adjoint=False, name=None", "solve", "matrix, rhs"),
    op(
        "tf.linalg.triangular_solve",
        "matrix, rhs, lower=True, adjoint=False, name=None",
        "solve_triangular",
        "matrix, rhs, lower=lower | True",
        note="TF solves with the lower triangle by default, keras.ops the upper: lower= "
        "is written.",
    ),
    op(
        "tf.linalg.qr",
        "input, full_matrices=False, name=None",
        "qr",
        "input, mode=qr_mode(full_matrices)",
    ),
    op(
        "tf.linalg.eigvalsh",
        "tensor, name=None",
        template="ops.eigh({tensor})[0]",
        note="Eigenvalues in ascending order, as in TensorFlow.",
    ),
    op(
        "tf.linalg.trace",
        "x, name=None",
        "trace",
        "x, axis1=-2, axis2=-1",
        note="keras.ops.trace (NumPy) sums axes 0 and 1 by default; TF the last two: written.",
    ),
    op(
        "tf.linalg.diag_part",
        "input, name='diag_part', k=0, padding_value=0, align='RIGHT_LEFT'",
        "diagonal",
        "input, offset=int_lit(k), axis1=-2, axis2=-1",
    ),
    op(
        "tf.norm tf.linalg.norm",
        "tensor, ord='euclidean', axis=None, keepdims=None, name=None",
        "norm",
        "tensor, ord=norm_ord(ord), axis=axes(axis), keepdims=none_to(keepdims, False)",
    ),
    op(
        "tf.linalg.band_part",
        "input, num_lower, num_upper, name=None",
        builder="band_part",
        when="`num_lower` and `num_upper` are literal ints (-1, 0 -> ops.tril; 0, -1 -> "
        "ops.triu; other bands -> ops.triu(ops.tril(x, upper), -lower))",
    ),
    op("tf.linalg.cross", "a, b, name=None", "cross", "a, b"),
    manual(
        "tf.linalg.svd",
        "TF returns (s, u, v), keras.ops.svd (u, s, vh) with v transposed, and the "
        "full_matrices defaults differ",
        "u, s, vh = ops.svd(x, full_matrices=False); v = ops.swapaxes(vh, -1, -2)",
    ),
    manual(
        "tf.linalg.eigh",
        "eigenvectors are unique only up to sign, which differs between LAPACK builds",
        "ops.eigh(x) returns (eigenvalues, eigenvectors) like TF; make the sign canonical "
        "if downstream code depends on it",
    ),
    manual(
        "tf.linalg.eig tf.linalg.eigvals tf.eig tf.eigvals",
        COMPLEX,
        "ops.eig(x) where the backend supports it, or restrict to symmetric matrices (ops.eigh)",
    ),
    manual(
        "tf.linalg.adjoint",
        "conjugate transpose of complex matrices",
        "for real matrices ops.swapaxes(x, -1, -2)",
    ),
    manual(
        "tf.linalg.cholesky_solve",
        "keras.ops has no cholesky_solve",
        "ops.solve_triangular twice: y = solve_triangular(L, b, lower=True); "
        "x = solve_triangular(ops.swapaxes(L, -1, -2), y)",
    ),
    manual(
        "tf.linalg.lstsq",
        "TF adds l2_regularizer and a fast Cholesky path",
        "ops.lstsq(a, b) for the plain least-squares solution",
    ),
    manual(
        "tf.linalg.pinv",
        "rcond conventions differ",
        "ops.pinv(a, rcond=...) after checking the cutoff",
    ),
    manual(
        "tf.linalg.expm tf.linalg.logm tf.linalg.sqrtm tf.matrix_square_root",
        "no keras.ops equivalent",
        "keep it in a backend-specific helper",
    ),
    manual(
        "tf.linalg.lu tf.linalg.lu_solve tf.linalg.lu_matrix_inverse tf.linalg.lu_reconstruct",
        "TF's packed LU format differs from ops.lu_factor's",
        "ops.lu_factor(x) returns (lu, pivots) in SciPy's format; ops.solve for solving",
    ),
    manual(
        "tf.linalg.matvec",
        "no keras.ops matvec",
        "ops.matmul(a, ops.expand_dims(b, -1))[..., 0]",
    ),
    manual(
        "tf.linalg.matrix_rank",
        "tolerance conventions differ",
        "ops.matrix_rank(a, tol=...)",
    ),
    manual(
        "tf.linalg.global_norm tf.clip_by_global_norm",
        "gradient-list utility (training loop)",
        "optimizers take clipnorm=/global_clipnorm=",
    ),
    manual(
        "tf.clip_by_norm",
        "no keras.ops equivalent",
        "x * ops.minimum(1.0, clip_norm / ops.maximum(ops.norm(x, axis=axes, keepdims=True), "
        "1e-12))",
    ),
    manual(
        "tf.linalg.normalize",
        "returns (normalized, norm)",
        "n = ops.norm(x, axis=axis, keepdims=True); x / n",
    ),
    manual(
        "tf.linalg.tridiagonal_solve tf.linalg.tridiagonal_matmul "
        "tf.linalg.banded_triangular_solve tf.linalg.eigh_tridiagonal",
        "structured linear algebra has no keras.ops equivalent",
        "build the dense matrix and use ops.solve / ops.matmul",
    ),
    op(
        "K.batch_dot",
        "x, y, axes=None",
        builder="batch_dot",
        note="Where both ranks are stated in the code (a literal shape given to reshape, "
        "permute_dimensions or keras.Input, directly or through a local name bound once) and "
        "`axes` is absent or a literal int or pair, an ops.einsum with the subscripts they "
        "give (two rank-2 inputs give shape (batch, 1), as K.batch_dot does: the einsum is "
        "wrapped in ops.expand_dims(..., -1)). Otherwise a call to `batch_dot`, Keras 2's "
        "K.batch_dot on keras.ops for every rank and axes, which apply writes into "
        "`_keras2_compat.py` beside the file (unless the module uses the name itself).",
        suggestion='ops.einsum with explicit subscripts, e.g. ops.einsum("bij,bkj->bik", x, y) '
        "for K.batch_dot(x, y, axes=[2, 2]) on rank-3 inputs",
    ),
]
