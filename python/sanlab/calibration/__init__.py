"""Parts of `sanlab calibrate` (python/sanlab/calibrate.py): the measured points and free
parameters it reads (`inputs`) and the calibrated scenario it writes (`toml_out`)."""
