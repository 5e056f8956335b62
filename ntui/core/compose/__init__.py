"""Compose: from a YAML preset to a validated job and its sbatch script.

The YAML source with line numbers (``yamlsrc``), finding and merging presets (``presets``), the typed job
(``spec``), what a rule reads (``draft``: the parsed preset, a rule's shape), the rule table every check comes from
(``rules``, its documents written by ``rulesdoc``), the GPU request (``gpureq``), the rendezvous configuration in
the extra args (``rdzvconf``), how torchrun and accelerate read extra-args (``launchcli``), the script (``render``,
with the in-job GPU sampler's lines from ``sampler``) and the check against the cluster's partitions and
``sbatch --test-only`` (``sitecheck``). Slurm's time forms and its option table are :mod:`ntui.core.slurm`'s
(``durations``, ``options``). Imports neither jobs, records, logs nor gpu.
"""
