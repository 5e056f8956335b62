"""Progress: how far a training run is, read from what its program already prints (``lines``), and what that
series means against the allocation's time (``series``)."""
