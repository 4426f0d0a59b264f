"""`sanlab calibrate` from Python: fit free scenario values so that simulated figures match
measured ones, and give each its range (docs/cli.md). The fit is `sanlab.calibration.fit`, the
ranges `sanlab.calibration.ranges`, the points and free parameters are read by
`sanlab.calibration.inputs`, the command is `sanlab.commands.calibrate`."""

from collections.abc import Callable

from sanlab.calibration import fit as _fit
from sanlab.calibration.fit import Best, Calibration, Fit, Mapper, dask_mapper, local_mapper
from sanlab.calibration.inputs import CalibrationError, read_points
from sanlab.calibration.ranges import with_ranges

__all__ = ["Calibration", "CalibrationError", "Fit", "calibrate", "dask_mapper", "local_mapper", "read_points"]


def calibrate(
    calibration: Calibration,
    mapper: Mapper,
    on_batch: Callable[[Best, int], None] = lambda best, n: None,
    range_seeds: int = 0,
    on_range: Callable[[int, int], None] = lambda round_, runs: None,
) -> Fit:
    """Fits the free values (`sanlab.calibration.fit.calibrate`), then, with `range_seeds` (2 or
    more; 0 skips them), each value's range on that many seeds after the fit's (`Fit.ranges`;
    `on_range` hears each round's runs so far)."""
    return with_ranges(_fit.calibrate(calibration, mapper, on_batch), mapper, range_seeds, on_range)
