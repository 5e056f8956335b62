"""Option parsing shared by the stub launchers, with the semantics of the real ones (argparse).

Both torchrun and accelerate launch accept ``--opt=VALUE`` and ``--opt VALUE``, either spelling
(``--rdzv-conf``/``--rdzv_conf``), and keep the last value given. The rendezvous configuration is
read as torch reads it: ``KEY=VALUE,...``, keys and values stripped, blank = none, anything else
refused (the stub then fails like the real launcher would).
"""

from __future__ import annotations


def parse_options(args: list[str]) -> dict[str, str]:
    """``--name[=value]``/``--name value`` words -> {name with '-' for '_': last value}; flags map to ''."""
    opts: dict[str, str] = {}
    i = 0
    while i < len(args):
        assert args[i].startswith("--"), f"not an option: {args[i]!r} in {args}"
        name, eq, value = args[i][2:].partition("=")
        if not eq and i + 1 < len(args) and not args[i + 1].startswith("--"):
            i += 1
            value = args[i]
        opts[name.replace("_", "-")] = value
        i += 1
    return opts


def rdzv_conf(text: str) -> dict[str, str]:
    """torch's reading of a rendezvous configuration value; ValueError where torch raises one."""
    config: dict[str, str] = {}
    if not text.strip():
        return config
    for item in text.split(","):
        key, _, value = (part.strip() for part in item.partition("="))
        if not key:
            raise ValueError(f"rendezvous configuration {text!r}: an empty key")
        if not value:
            raise ValueError(f"rendezvous configuration option {key!r} has no value")
        config[key] = value
    return config


def shown(config: dict[str, str]) -> str:
    """The configuration as the stub program reports it: sorted ``key=value`` joined by ','."""
    return ",".join(f"{k}={v}" for k, v in sorted(config.items()))
