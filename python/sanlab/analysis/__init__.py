"""What a run's document means, computed from it: the path selectors' health, each fault's
failover and recovery, the VMs' IOPS at the end of the run. Plain data, no presentation: the
terminal's tables (`sanlab.views`) and the report (`sanlab.report`) both show it.

Imports only the floor: `sanlab.document` and `sanlab.resolved`.
"""
