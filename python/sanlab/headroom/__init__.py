"""`sanlab headroom`: how much more load a scenario takes before its SLOs fail, and what
saturates first (docs/headroom.md): slo.py (the objectives), grow.py (a load factor as `--set`
overrides), points.py (a point's runs, here or on Dask), search.py (expand, then bisect, seeds
added while undecided), bottleneck.py (utilisations), answer.py (headroom.json and the short
answer); the command is `sanlab.commands.headroom`."""
