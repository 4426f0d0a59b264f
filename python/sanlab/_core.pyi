"""Type stubs for the native engine module built from crates/sanlab-py."""

__version__: str

class ScenarioError(Exception):
    """A user-input error; the message names the file, the location and the fix."""

class InternalError(Exception):
    """A bug in sanlab (a Rust panic); the message gives the panic's place. Please report it."""

class Progress:
    """Watches a run from another thread; `cancel()` stops it."""

    def __init__(self) -> None: ...
    def variants(self) -> list[tuple[str, str, float, float, float]]:
        """Each selected variant in scenario order, once the run has checked the scenario: name,
        state (`waiting`, `running`, `done`, `stopped`), simulated seconds reached and to run (0
        until its engine starts), wall seconds (so far while it runs)."""
    def cancel(self) -> None: ...

def run(
    path: str,
    variants: list[str] | None = ...,
    sets: list[str] = ...,
    seed: int | None = ...,
    duration: str | None = ...,
    progress: Progress | None = ...,
    jobs: int = ...,
    replications: int = ...,
    first_replication: int = ...,
) -> str:
    """Runs a scenario's variants (all when `variants` is None), up to `jobs` (default 1) at once,
    and returns the result document as JSON, the same for any `jobs`; with `replications`, each
    variant that many times from `first_replication` on (replication r with its seed + r)."""

def cores() -> int:
    """The cores this process may run on: `sanlab run`'s default `--jobs`."""

def run_times(path: str, sets: list[str] = ..., variants: list[str] | None = ...) -> str:
    """Each selected variant's `{"variant", "duration_s", "warmup_s", "sample_interval_s"}` as JSON."""

def validate(path: str, sets: list[str] = ..., variants: list[str] | None = ..., cost: bool = ...) -> str:
    """Checks a scenario without running it; returns `{"scenario", "variants"}` as JSON, with
    `"cost"` (the estimate of what running it costs, from a short pilot run) when `cost` is set."""

def kinds() -> str:
    """Returns every component kind and its parameters as JSON."""

def file_name(name: str) -> str:
    """The file name `name` becomes in a run folder; raises ScenarioError when it gives none or is too long."""
