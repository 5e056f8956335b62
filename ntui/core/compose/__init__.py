"""Compose: from a YAML preset to a validated job and its sbatch script.

The YAML source with line numbers (``yamlsrc``), finding and merging presets (``presets``), the typed job
(``spec``), the rule table every check comes from (``rules``), how torchrun and accelerate read extra-args
(``launchcli``), Slurm time formats (``timefmt``), the script (``render``, with the in-job GPU sampler's lines from
``sampler``) and the check against the cluster's partitions and ``sbatch --test-only`` (``sitecheck``).
Imports neither jobs, records, logs nor gpu.
"""
