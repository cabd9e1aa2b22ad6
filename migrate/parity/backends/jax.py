"""JAX: ``predict`` and ``fit`` jit-compile; a persistent compilation cache makes the next
run of the same model several times faster."""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass

from kmigrate.parity.backends.profile import BackendProfile


@dataclass(frozen=True)
class JaxProfile(BackendProfile):
    def environment(self, env: MutableMapping[str, str], *, compile_cache: str | None) -> None:
        if not compile_cache:
            return
        env.setdefault("JAX_COMPILATION_CACHE_DIR", compile_cache)
        env.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
        env.setdefault("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "0")

    def device(self) -> str:
        import jax  # noqa: PLC0415 - in the jax worker only

        return str(jax.devices()[0].platform)


PROFILE = JaxProfile(
    name="jax",
    keras_backend="jax",
    modules=("jax", "jaxlib"),
    pip="jax[cpu]",
    watch_tensorflow=True,
)
