"""Parts of `sanlab calibrate` (its Python API is python/sanlab/calibrate.py, the command
python/sanlab/commands/calibrate.py): the measured points and free parameters it reads
(`inputs`), the fit (`fit`), each fitted value's range (`ranges`) and the calibrated scenario it
writes (`toml_out`)."""
