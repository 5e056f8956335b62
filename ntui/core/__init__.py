"""ntui's Textual-free core, in domain packages layered from the top: jobs, records, gpu, logs and compose,
jobfiles, slurm; with the leaves every layer uses (config, errors, hosts, paths, problems, textsafe).

Nothing under this package may import ``textual`` (a test runs the imports in a fresh
interpreter and checks ``sys.modules``).
"""
