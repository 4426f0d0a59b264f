"""Type stubs for the native engine module built from crates/sanlab-py."""

__version__: str

class ScenarioError(Exception):
    """A user-input error; the message names the file, the location and the fix."""

def run(
    path: str,
    variants: list[str] | None = ...,
    sets: list[str] = ...,
    seed: int | None = ...,
    duration: str | None = ...,
) -> str:
    """Runs a scenario's variants (all when `variants` is None) and returns the result document as JSON."""

def validate(path: str, sets: list[str] = ..., variants: list[str] | None = ...) -> str:
    """Checks a scenario without running it; returns `{"scenario", "variants"}` as JSON."""

def kinds() -> str:
    """Returns every component kind and its parameters as JSON."""
