"""A Linux host in: `multipath -ll` (dm-multipath), `nvme list-subsys` (NVMe native multipath),
the block queue settings of `/sys/block` and an `iostat -x` capture, each read by a module of its
own into the records of `records.py`; `topology.py` makes of them the host's arrays, volumes and
links, `load.py` each volume's load and its array's speed, and `scenario.py` the scenario's text
(docs/from-your-host.md, "A Linux host")."""
