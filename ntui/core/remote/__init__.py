"""ntui from another machine: the cluster's files over the ssh master (the agent, its protocol, the client)."""
