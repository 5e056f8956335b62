"""Where every rank of a running job is: Python stacks taken with py-spy on each node by one overlapping step
(:mod:`.probe`, the node side), read back and grouped into classes of identical stacks (:mod:`.group`)."""
