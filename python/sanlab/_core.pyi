"""Type stubs for the native engine module built from crates/sanlab-py."""

__version__: str

class ScenarioError(Exception):
    """A user-input error; the message names the file, the location and the fix."""

class InternalError(Exception):
    """A bug in sanlab (a Rust panic); the message gives the panic's place. Please report it."""

class Progress:
    """Watches a run from another thread; `cancel()` stops it at its next sample."""

    def __init__(self) -> None: ...
    @property
    def sim_s(self) -> float: ...
    @property
    def end_s(self) -> float: ...
    @property
    def variants_done(self) -> int: ...
    def cancel(self) -> None: ...

def run(
    path: str,
    variants: list[str] | None = ...,
    sets: list[str] = ...,
    seed: int | None = ...,
    duration: str | None = ...,
    progress: Progress | None = ...,
) -> str:
    """Runs a scenario's variants (all when `variants` is None) and returns the result document as JSON."""

def validate(path: str, sets: list[str] = ..., variants: list[str] | None = ..., cost: bool = ...) -> str:
    """Checks a scenario without running it; returns `{"scenario", "variants"}` as JSON, with
    `"cost"` (the estimate of what running it costs, from a short pilot run) when `cost` is set."""

def kinds() -> str:
    """Returns every component kind and its parameters as JSON."""

def file_name(name: str) -> str:
    """The file name `name` becomes in a run folder; raises ScenarioError when it gives none or is too long."""
