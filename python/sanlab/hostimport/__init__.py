"""A real host into sanlab: esxcli storage listings and esxtop batch captures read as ESXi writes
them (`esxcli.py`, `esxtop.py`) into the plain records of `host.py`, from which `scenario.py`
builds a scenario whose every inferred value names its source."""
