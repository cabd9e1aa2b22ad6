"""What one model of a batched parity worker may not leave to the next (issue 34), without a
framework: `isolation.ModelIsolation` on this process's own sys.modules, sys.path,
environment and a stand-in Keras registry of custom objects."""

from __future__ import annotations

import os
import sys
import types

from kmigrate.parity import isolation


def test_a_model_leaves_no_module_path_or_variable_behind(tmp_path, monkeypatch):
    (tmp_path / "mylayers_iso.py").write_text("FACTOR = 2\n", encoding="utf-8")
    task = {"model": {"sys_path": [str(tmp_path)]}}
    path_before = list(sys.path)
    with isolation.ModelIsolation(task):
        sys.path.insert(0, str(tmp_path))
        os.environ["KMIGRATE_ISOLATION_TEST"] = "1"
        import mylayers_iso  # noqa: F401, PLC0415 - the model's own sibling module

        assert "mylayers_iso" in sys.modules
    assert "mylayers_iso" not in sys.modules  # the next tree's mylayers_iso loads its own
    assert sys.path == path_before
    assert "KMIGRATE_ISOLATION_TEST" not in os.environ
    assert "json" in sys.modules  # installed code stays imported


def test_custom_objects_a_model_registered_go_and_replaced_ones_come_back(monkeypatch):
    registry = types.ModuleType("keras.src.saving.object_registration")
    builtin = object()
    registry.GLOBAL_CUSTOM_OBJECTS = {"gelu": builtin, "library_layer": object()}
    registry.GLOBAL_CUSTOM_NAMES = {}
    monkeypatch.setitem(sys.modules, registry.__name__, registry)
    user = types.ModuleType("kmigrate_iso_user_layers")
    user.__file__ = "/project/kmigrate_iso_user_layers.py"

    def my_gelu(x):
        return x

    my_gelu.__module__ = user.__name__
    with isolation.ModelIsolation({"model": {"sys_path": ["/project"]}}):
        sys.modules[user.__name__] = user
        registry.GLOBAL_CUSTOM_OBJECTS["gelu"] = my_gelu  # Keras 2 code's override
        registry.GLOBAL_CUSTOM_OBJECTS["MyLayer"] = my_gelu
    assert registry.GLOBAL_CUSTOM_OBJECTS["gelu"] is builtin
    assert "MyLayer" not in registry.GLOBAL_CUSTOM_OBJECTS
    assert "library_layer" in registry.GLOBAL_CUSTOM_OBJECTS


def test_a_model_that_imported_tensorflow_asks_for_a_fresh_process(monkeypatch):
    watched = [{"watch_tensorflow": True}]
    monkeypatch.delitem(sys.modules, "tensorflow", raising=False)
    assert not isolation.needs_fresh_process(watched)
    monkeypatch.setitem(sys.modules, "tensorflow", types.ModuleType("tensorflow"))
    assert isolation.needs_fresh_process(watched)
    assert not isolation.needs_fresh_process([{"watch_tensorflow": False}])
