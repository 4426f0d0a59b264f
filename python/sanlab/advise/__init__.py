"""`sanlab advise`: the settings a user can change in a scenario (path selection, queue depths,
array preference, flow control, QoS, shares), searched on the sweep machinery for an objective
(docs/advise.md); the command is `sanlab.commands.advise`."""
