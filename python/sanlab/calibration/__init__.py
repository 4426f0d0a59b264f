"""Parts of `sanlab calibrate` (the fit itself is python/sanlab/calibrate.py): the measured
points and free parameters it reads (`inputs`), the command's checks, tables and progress
(`command`) and the calibrated scenario it writes (`toml_out`)."""
