"""Parity's trust fixes (issue 31) without a framework: the layer hooks put back exactly
what a layer had, a skipped check is never a PASS, the reference's failure is applied before
a target's error is counted, constants one side lacks are named and the rest matched,
degenerate outputs are detected and perturbed the same way on every side, the random-layer
search has no limit, and the Keras 2 decision follows imports through the project."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from kmigrate.parity.assemble import ReportBuilder
from kmigrate.parity.flavour import keras2_importer
from kmigrate.parity.model_layers import ModelLayers
from kmigrate.parity.plan import ParityOptions
from kmigrate.parity.report import BackendRun, CheckResult, ParityReport, verdict
from kmigrate.parity.train_step import TrainingCheck
from kmigrate.parity.verdicts import compare_checks
from kmigrate.parity.weight_transfer import constant_outputs, noise
from kmigrate.parity.weights import WeightGroup, WeightMismatchError, match_weights

# -- hooks -----------------------------------------------------------------------------------


class FakeLayer:
    def __init__(self, name: str, children=()):
        self.name = name
        self.children = list(children)

    def _flatten_layers(self, include_self=False, recursive=False):
        return list(self.children)

    def call(self, x):
        return x + 1


class FakeOpLambda(FakeLayer):
    """Like tf_keras's TFOpLambda: the layer sets its own `call` on the instance."""

    def __init__(self, name: str):
        super().__init__(name)
        self.call = lambda x: x * 2


def test_hooks_put_back_an_instance_call_and_remove_only_their_own():
    plain, op = FakeLayer("dense"), FakeOpLambda("tf.reshape")
    own_call = op.call
    layers = ModelLayers(FakeLayer("model", [plain, op]), np.asarray)
    records: list = []
    restore = layers.install_hooks(records)
    three = np.full(1, 3.0)
    assert op.call(three)[0] == 6 and plain.call(three)[0] == 4
    assert [name for name, _, _ in records] == ["tf.reshape", "dense"]
    layers.remove_hooks(restore)
    assert op.call is own_call  # `del layer.call` used to delete it: x + 1 instead of x * 2
    assert "call" not in vars(plain)
    assert op.call(three)[0] == 6 and plain.call(three)[0] == 4


# -- skipped checks --------------------------------------------------------------------------


def target_status(checks: list[CheckResult], accept_skips: bool = False) -> BackendRun:
    run = BackendRun("jax", "target", "m.py:build_model", "pass", checks=checks)
    builder = ReportBuilder(SimpleNamespace(options=ParityOptions(accept_skips=accept_skips)))
    run.status = builder._verdict(run)
    return run


def test_a_skipped_check_is_not_a_pass_unless_skips_are_accepted():
    skipped = [
        CheckResult("call", "pass"),
        CheckResult("train", "skipped", detail=["the reference failed it: ValueError: boom"]),
    ]
    run = target_status(skipped)
    assert run.status == "not compared"
    reference = BackendRun("tensorflow", "reference", "m.py:build_model", "reference")
    report = ParityReport("m.py:build_model", "before_after", reference, runs=[run])
    assert not report.passed and report.exit_code == 1
    assert "NOT COMPARED" in verdict(report) and "--accept-skips" in verdict(report)
    accepted = target_status(skipped, accept_skips=True)
    assert accepted.status == "pass" and "--accept-skips" in accepted.notes[-1]
    # nothing to compare on either side (a frozen model) is not a skip
    frozen = [CheckResult("call", "pass"), CheckResult("train", "n/a")]
    assert target_status(frozen).status == "pass"
    assert target_status([CheckResult("call", "fail"), *skipped[1:]]).status == "fail"


def test_the_reference_failing_a_check_is_applied_before_the_target_error():
    error = {"status": "error", "error": {"type": "ValueError", "message": "bad targets"}}
    reference = SimpleNamespace(result={"checks": {"train": error}, "train": {}}, arrays={})
    target = SimpleNamespace(result={"checks": {"train": error}, "train": {}}, arrays={})
    (train,) = compare_checks(target, reference)
    assert train.status == "skipped" and "the reference failed it" in train.detail[0]


def test_a_lost_constant_is_not_compared_after_the_training_step():
    from kmigrate.parity.verdicts import compare_train  # noqa: PLC0415

    ref_train = {"loss": 1.0, "random_layers": [], "groups": ["proj", "mask"]}
    reference = SimpleNamespace(
        result={"checks": {"train": {"status": "ok"}}, "train": ref_train},
        arrays={"tw0_0": np.ones(2, np.float32), "tw1_0": np.ones(3, np.float32)},
    )
    lost = [{"side": "reference", "group": 1, "index": 0, "constant": True}]
    here = {"train": {"loss": 1.0, "random_layers": []}, "weights_unmatched": lost}
    check = compare_train(here, {"tw0_0": np.ones(2, np.float32)}, reference, atol=None, rtol=None)
    assert check.status == "pass", check
    assert any("a constant this model does not track" in d for d in check.detail)
    here["weights_unmatched"] = []
    check = compare_train(here, {"tw0_0": np.ones(2, np.float32)}, reference, atol=None, rtol=None)
    assert check.status == "fail"


# -- weights one side tracks and the other does not ------------------------------------------


def group(path, names, shapes, trainable):
    return WeightGroup(path, "Layer", tuple(names), tuple(shapes), tuple(trainable))


def test_unmatched_constants_are_named_and_the_rest_matched():
    ref = [
        group("attn", ["kernel", "mask"], [(4, 4), (4, 4)], [True, False]),
        group("table", ["index"], [(10,)], [False]),
        group("head", ["kernel"], [(4, 2)], [True]),
    ]
    here = [
        group("attn", ["kernel"], [(4, 4)], [True]),
        group("head", ["kernel"], [(4, 2)], [True]),
    ]
    match = match_weights(ref, here)
    assert match.how == "path" and match.pairs == [(0, 0), (2, 1)]
    described = [u.describe() for u in match.unmatched]
    assert any("'table' weight 'index' (10,), a constant" in d for d in described), described
    assert any("'attn' weight 'mask' (4, 4), a constant" in d for d in described), described


def test_an_unmatched_trainable_weight_is_still_an_error():
    ref = [group("attn", ["kernel", "bias"], [(4, 4), (4,)], [True, True])]
    here = [group("attn", ["kernel"], [(4, 4)], [True])]
    with pytest.raises(WeightMismatchError, match="'bias' \\(trainable, reference only\\)"):
        match_weights(ref, here)


# -- degenerate outputs ----------------------------------------------------------------------


def test_constant_outputs_are_found_and_the_noise_is_the_same_on_every_side():
    arrays = [("out", np.zeros((4, 3), np.float32)), ("ids", np.zeros((4,), np.int32))]
    assert constant_outputs(arrays) == ["'out' is all 0"]
    assert constant_outputs([("out", np.arange(6, dtype=np.float32))]) == []
    a, b = noise(0, 2, 1, (3, 3), 0.5), noise(0, 2, 1, (3, 3), 0.5)
    assert np.array_equal(a, b) and np.ptp(a) > 0
    assert not np.array_equal(a, noise(0, 2, 0, (3, 3), 0.5))


# -- random layers ---------------------------------------------------------------------------


def test_the_random_layer_search_has_no_limit():
    check = TrainingCheck.__new__(TrainingCheck)
    check.info = {}
    check.worker = SimpleNamespace(inputs=[np.zeros((4, 3), "float32")])  # the parity batch
    layers = [f"drop_{i}" for i in range(12)]
    check.first_varying = lambda forced: next((p for p in layers if p not in forced), None)
    assert check.random_layers() == layers
    assert "note" not in check.info


# -- --reference-keras auto follows the model's imports --------------------------------------


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_keras2_is_found_through_packages_and_relative_imports(tmp_path):
    write(tmp_path / "mypkg" / "__init__.py", "")
    write(tmp_path / "mypkg" / "blocks.py", "from .base import Base\n")
    write(tmp_path / "mypkg" / "base.py", "from tensorflow import keras\n")
    entry = write(tmp_path / "models.py", "import keras\nfrom mypkg.blocks import Base\n")
    source = entry.read_text(encoding="utf-8")
    assert keras2_importer(source, str(tmp_path), str(entry)) == "mypkg/base.py"
    # a model inside a package reaches a sibling package through the package root
    write(tmp_path / "app" / "__init__.py", "")
    write(tmp_path / "app" / "net.py", "import keras\nfrom mypkg import blocks\n")
    net = tmp_path / "app" / "net.py"
    assert keras2_importer(net.read_text(), str(net.parent), str(net)) == "mypkg/base.py"
    pure = write(tmp_path / "pure" / "models.py", "import keras\nfrom layers import X\n")
    write(tmp_path / "pure" / "layers.py", "import keras\n")
    assert keras2_importer(pure.read_text(), str(pure.parent), str(pure)) is None


# -- a weight Keras 2 moved to the layer that holds it ---------------------------------------


def weight_norm_groups(keras2: bool, dense_path: str = "wn/dense") -> list[WeightGroup]:
    """tensorflow_addons' WeightNormalization: Keras 2 lists the wrapped Dense's kernel
    under the wrapper (it is assigned to `self.v`), Keras 3 under the Dense."""
    if keras2:
        return [
            group("wn", ["wn/g:0", "wn/kernel:0"], [(5,), (6, 5)], [True, True]),
            group(dense_path, ["wn/bias:0"], [(5,)], [True]),
            group("head", ["head/kernel:0", "head/bias:0"], [(5, 3), (3,)], [True, True]),
        ]
    return [
        group("wn", ["wn/g"], [(5,)], [True]),
        group(dense_path, ["wn/dense/kernel", "wn/dense/bias"], [(6, 5), (5,)], [True, True]),
        group("head", ["head/kernel", "head/bias"], [(5, 3), (3,)], [True, True]),
    ]


def test_a_weight_listed_under_the_wrapper_on_one_side_is_matched_in_its_sub_layer():
    ref, here = weight_norm_groups(True), weight_norm_groups(False)
    match = match_weights(ref, here)
    assert match.unmatched == []
    assert [(m.ref_group, m.ref_index, m.group, m.index) for m in match.moved] == [(0, 1, 1, 0)]
    assert "'kernel' (6, 5) is a weight of 'wn' on the reference and of 'wn/dense' here" in (
        match.moved[0].describe()
    )
    order = match.order(ref, here)
    assert (0, 1, [(1, 0)]) in order  # the moved kernel, under the reference's indices
    assert (0, 0, [(0, 0)]) in order and (1, 1, [(0, 1)]) in order


def test_a_moved_weight_in_an_unrelated_layer_or_with_a_rival_stays_an_error():
    # the kernel here lies in a layer that is neither the wrapper nor inside it
    with pytest.raises(WeightMismatchError, match="'kernel' \\(trainable, reference only\\)"):
        match_weights(weight_norm_groups(True, "other"), weight_norm_groups(False, "other"))
    # two wrapped layers here both list a kernel of that shape: which one is the
    # reference's is a guess
    ref = weight_norm_groups(True)
    ref.insert(2, group("wn/dense_2", ["wn/bias_2:0"], [(5,)], [True]))
    here = weight_norm_groups(False)
    here.insert(2, group("wn/dense_2", ["kernel", "bias_2"], [(6, 5), (5,)], [True, True]))
    with pytest.raises(WeightMismatchError, match="unmatched: 'kernel'"):
        match_weights(ref, here)
    # a different shape is not the same weight
    ref = weight_norm_groups(True)
    ref[0] = group("wn", ["wn/g:0", "wn/kernel:0"], [(5,), (5, 6)], [True, True])
    with pytest.raises(WeightMismatchError, match="'kernel' \\(trainable, reference only\\)"):
        match_weights(ref, weight_norm_groups(False))
