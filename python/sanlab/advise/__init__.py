"""`sanlab advise`: the settings a user can change in a scenario (path selection, queue depths,
array preference, flow control, QoS, shares), searched on the sweep machinery for an objective
(docs/advise.md)."""

from sanlab.advise.command import AdviseError, add_parser, run

__all__ = ["AdviseError", "add_parser", "run"]
