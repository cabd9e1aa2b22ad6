"""Ops catalog section "Control flow": data only."""

from __future__ import annotations

from kmigrate.rules.ops_catalog._model import manual, op
from kmigrate.rules.ops_catalog._wording import GRAPH_ONLY, NO_TF_STATE

CONTROL_FLOW = [
    op(
        "tf.cond",
        "pred, true_fn=None, false_fn=None, name=None",
        "cond",
        "pred, true_fn, false_fn",
        needs=("true_fn", "false_fn"),
        builder="cond",
        when=NO_TF_STATE + "; no branch changes state (assigns or updates a variable, runs "
        "under tf.control_dependencies, asserts, prints, adds a loss, sets an attribute), "
        "followed into the functions and methods it calls; the branches do not visibly "
        "return different structures (a 2-tuple and a 3-tuple, a tuple and one tensor)",
        legacy={"fn1": "true_fn", "fn2": "false_fn"},
        note="A predicate that is a Keras weight of the layer (self.flag from "
        "self.add_weight) is passed as its value, self.flag.value: keras.ops.cond raises "
        "on the variable itself on every backend.",
    ),
    op(
        "tf.while_loop",
        "cond, body, loop_vars, shape_invariants=None, parallel_iterations=10, "
        "back_prop=True, swap_memory=False, maximum_iterations=None, name=None",
        "while_loop",
        "cond, body, loop_vars, maximum_iterations=maximum_iterations",
        drop=["parallel_iterations", "swap_memory"],
        when=NO_TF_STATE,
        note="parallel_iterations and swap_memory are performance hints, dropped.",
    ),
    op(
        "tf.map_fn",
        "fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False, "
        "infer_shape=True, name=None, fn_output_signature=None",
        "map",
        "fn, elems",
        drop=["dtype", "fn_output_signature", "parallel_iterations", "swap_memory", "infer_shape"],
        when=NO_TF_STATE,
        note="keras.ops.map infers the output structure by calling fn; dtype and "
        "fn_output_signature are dropped.",
    ),
    op(
        "K.map_fn",
        "fn, elems, name=None, dtype=None",
        "map",
        "fn, elems",
        drop=["dtype"],
        when=NO_TF_STATE,
    ),
    op(
        "tf.scan",
        "fn, elems, initializer=None, parallel_iterations=10, back_prop=True, "
        "swap_memory=False, infer_shape=True, reverse=False, name=None",
        builder="scan",
        drop=["parallel_iterations", "swap_memory", "infer_shape"],
        accept={"back_prop": [True]},
        needs=("initializer",),
        when="`reverse` is a literal; fn(acc, x) -> acc is wrapped into keras.ops.scan's "
        "f(carry, x) -> (carry, y) and the stacked accumulators ([1]) are returned; " + NO_TF_STATE,
        reason="without an initializer TF starts from elems[0] and emits it first",
        suggestion="pass initializer=elems[0] and drop the first element "
        "(ops.scan(f, elems[0], elems[1:]))",
    ),
    op(
        "tf.vectorized_map",
        "fn, elems, fallback_to_while_loop=True, warn=True",
        "vectorized_map",
        "fn, elems",
        drop=["fallback_to_while_loop", "warn"],
        when=NO_TF_STATE,
    ),
    manual(
        "tf.switch_case tf.case",
        "out-of-range and negative branch indices run the default (last) branch in TF; "
        "keras.ops.switch clamps the index",
        "ops.switch(ops.clip(index, 0, n - 1), branches) if the index is in range",
    ),
    manual(
        "K.switch",
        "K.switch takes tensors or callables and broadcasts the condition",
        "ops.where(condition, then, else) for tensors; ops.cond for callables",
    ),
    manual(
        "tf.foldl tf.foldr K.foldl K.foldr",
        "keras.ops.scan returns (carry, ys)",
        "ops.scan(lambda c, x: (fn(c, x), None), initializer, elems)[0] (reverse=True for foldr)",
    ),
    op(
        "K.in_train_phase K.in_test_phase",
        "x, alt, training=None",
        builder="train_phase",
        when="it is in a layer's `call` and `training` is passed as that method's own "
        "`training` parameter (Keras 3 has no global learning phase, but fills that "
        "parameter as Keras 2 did), and each branch is visibly a tensor, a lambda or a "
        "function `call` defines (in_train_phase calls callables)",
        reason="Keras 3 has no global learning phase",
        suggestion="take a `training` argument in call() and branch on it: "
        "`x if training else alt` (ops.cond for a tensor condition)",
        note="`K.in_train_phase(x, alt, training=training)` becomes "
        "`(x if training else alt)`; a lambda or nested function is called in its branch, "
        "so only the chosen branch runs, as before. K.in_test_phase swaps the branches.",
    ),
    op(
        "K.rnn",
        "step_function, inputs, initial_states, go_backwards=False, mask=None, "
        "constants=None, unroll=False, input_length=None, time_major=False, "
        "zero_output_for_mask=False, return_all_outputs=True",
        builder="keras2_helper",
        note="A call to `rnn`, Keras 2's K.rnn on keras.ops.scan (the step function, "
        "masks, a tensor input_length, go_backwards, constants and time_major as Keras 2 "
        "treats them; it runs under jit and in a functional model), which apply writes "
        "into `_keras2_compat.py` beside the file (unless the module uses the name "
        "itself). Keras 3 has no public K.rnn.",
    ),
    manual(
        "tf.custom_gradient tf.recompute_grad tf.grad_pass_through",
        "the gradient function conventions differ between backends",
        "ops.custom_gradient(f) (see its docstring for the per-backend grad signature)",
    ),
    manual(
        "tf.gradients tf.hessians K.gradients",
        GRAPH_ONLY,
        "differentiate in a train_step override or a backend-specific training loop",
    ),
    op(
        "tf.TensorArray",
        "dtype, size=None, dynamic_size=None, clear_after_read=None, "
        "tensor_array_name=None, handle=None, flow=None, infer_shape=True, "
        "element_shape=None, colocate_with_first_write_call=True, name=None",
        builder="tensor_array",
        when="`ta = tf.TensorArray(dtype, size=n)`, n a Python value (not read from a "
        "tensor's shape when the model runs: a Python loop over that fails in a TensorFlow "
        "functional model with the dimension unknown), is written once per step of a Python "
        "`for i in range(n)` loop in the same function (`ta = ta.write(i, value)`) and "
        "read only by `ta.stack()` after it: a list, keras.ops.convert_to_tensor(value, "
        "dtype) appended, keras.ops.stack. A length that is a tensor (or a loop over "
        "`tf.range(n)`) becomes keras.ops.scan(step, state, keras.ops.arange(n)) where the "
        "loop body is assignments to names only, the loop variable only indexes, the "
        "state is bound before the loop and the value written is a state name "
        "(rules/common/catalog/tensor_array_scan.py); every other use is reported (rule "
        "KM207)",
    ),
]
