"""`sanlab calibrate` from Python: fit free scenario values so that simulated figures match
measured ones (docs/cli.md). The fit is `sanlab.calibration.fit`, the points and free parameters
are read by `sanlab.calibration.inputs`, the command is `sanlab.calibration.command`."""

from sanlab.calibration.fit import Calibration, Fit, calibrate, dask_mapper, local_mapper
from sanlab.calibration.inputs import CalibrationError, read_points

__all__ = ["Calibration", "CalibrationError", "Fit", "calibrate", "dask_mapper", "local_mapper", "read_points"]
