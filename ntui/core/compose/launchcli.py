"""How torchrun (torch 2.13) and ``accelerate launch`` (accelerate 1.15) read the words of ``launcher.extra-args``.

Both are argparse programs: every long option has a dash and an underscore spelling, an option takes no value
(a flag) or exactly one (``--opt=VALUE`` or the next word), some values must be a number or one of fixed
choices, and the first word that is neither an option nor an option's value becomes the program, everything
after it the program's arguments. torchrun also takes any unambiguous prefix of an option (argparse's
``allow_abbrev``); accelerate launch takes none. The tables below are those two parsers' options;
``tests/unit/test_launchcli.py`` compares them with the installed parsers, and compares
:func:`read_extra_args`'s verdicts with what the parsers do on a few thousand word lists.

Rule R14 reports every word the launcher would refuse, or read differently from how it is written: ntui's own
checks (R11, R13) and the renderer know options by their full names only. Textual-free and pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal, cast

#: How a launcher's parser converts an option's value: Python's int or float, accelerate's str_to_bool (one
#: value, or a comma list), or one of fixed choices. Options not listed take any text.
ValueKind = Literal["int", "float", "bool", "bools"] | tuple[str, ...]
_TRUE = ("y", "yes", "t", "true", "on", "1")
_FALSE = ("n", "no", "f", "false", "off", "0")


def value_problem(kind: ValueKind, value: str) -> str | None:
    """Why the parser would refuse ``value`` for an option of this kind (None: it takes it)."""
    if isinstance(kind, tuple):
        return None if value in kind else f"is one of {', '.join(kind)}"
    if kind in ("int", "float"):
        try:
            int(value) if kind == "int" else float(value)
        except ValueError:
            return "is a whole number" if kind == "int" else "is a number"
        return None
    items = value.split(",") if kind == "bools" else [value]
    return None if all(i.lower() in _TRUE + _FALSE for i in items) else "is true or false"


def _kinds(choices: Mapping[str, tuple[str, ...]], **by_kind: str) -> dict[str, ValueKind]:
    out: dict[str, ValueKind] = dict(choices)
    for kind, names in by_kind.items():
        out.update((name, cast(ValueKind, kind)) for name in names.split())
    return out


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


@dataclass(frozen=True)
class LauncherCli:
    """One launcher's options: long ones in its documented spelling (the other spelling is accepted too)."""

    title: str
    version: str
    flags: frozenset[str]
    valued: frozenset[str]
    short: Mapping[str, str]
    abbrev: bool
    values: Mapping[str, ValueKind] = field(default_factory=dict)  # what a valued option's parser accepts

    @cached_property
    def _spellings(self) -> dict[str, str]:
        """Each option's two spellings (all dashes, all underscores; never mixed) -> its documented one."""
        out: dict[str, str] = {}
        for o in self.flags | self.valued:
            out["--" + o[2:].replace("_", "-")] = out["--" + o[2:].replace("-", "_")] = o
        return out

    def full(self, name: str) -> str | None:
        """The documented spelling of a long option given in either spelling (None: not an option)."""
        return self._spellings.get(name)

    def prefixed(self, prefix: str) -> list[str]:
        """The options (documented spelling, sorted) of which ``prefix`` begins a spelling."""
        return sorted({o for spelling, o in self._spellings.items() if spelling.startswith(prefix)})


TORCHRUN = LauncherCli(
    title="torchrun",
    version="torch 2.13",
    flags=_words("--help --standalone --module --no-python --run-path --virtual-local-rank"),
    valued=_words("""
        --nnodes --nproc-per-node --rdzv-backend --rdzv-endpoint --rdzv-id --rdzv-conf --max-restarts
        --monitor-interval --start-method --event-log-handler --role --log-dir --redirects --tee
        --local-ranks-filter --duplicate-stdout-filters --duplicate-stderr-filters --node-rank --master-addr
        --master-port --local-addr --logs-specs --numa-binding --signals-to-handle --shutdown-timeout"""),
    short={"-h": "--help", "-m": "--module", "-r": "--redirects", "-t": "--tee"},
    abbrev=True,
    values=_kinds({"--start-method": ("spawn", "fork", "forkserver"),
                   "--numa-binding": ("node", "socket", "exclusive", "core-complex")},
                  int="--max-restarts --node-rank --master-port --shutdown-timeout", float="--monitor-interval"),
)

ACCELERATE = LauncherCli(
    title="accelerate launch",
    version="accelerate 1.15",
    flags=_words("""
        --help --quiet --cpu --multi_gpu --tpu --enable_cpu_affinity --dynamo_use_fullgraph --dynamo_use_dynamic
        --dynamo_use_regional_compilation --use_deepspeed --use_fsdp --use_parallelism_config --use_megatron_lm
        --module --no_python --same_network --debug --tpu_cluster --no_tpu_cluster --tpu_use_sudo
        --downcast_bf16 --fp8_use_autocast_during_eval"""),
    valued=_words("""
        --config_file --mixed_precision --num_processes --num_machines --num_cpu_threads_per_process
        --dynamo_backend --dynamo_mode --gpu_ids --machine_rank --main_process_ip --main_process_port --tee
        --log_dir --role --rdzv_backend --rdzv_conf --max_restarts --monitor_interval
        --deepspeed_config_file --zero_stage --offload_optimizer_device --offload_param_device
        --offload_optimizer_nvme_path --offload_param_nvme_path --gradient_accumulation_steps
        --gradient_clipping --zero3_init_flag --zero3_save_16bit_model --deepspeed_hostfile
        --deepspeed_exclusion_filter --deepspeed_inclusion_filter --deepspeed_multinode_launcher
        --deepspeed_moe_layer_cls_names --fsdp_version --fsdp_offload_params --fsdp_min_num_params
        --fsdp_sharding_strategy --fsdp_reshard_after_forward --fsdp_auto_wrap_policy
        --fsdp_transformer_layer_cls_to_wrap --fsdp_backward_prefetch --fsdp_state_dict_type
        --fsdp_forward_prefetch --fsdp_use_orig_params --fsdp_cpu_ram_efficient_loading
        --fsdp_sync_module_states --fsdp_activation_checkpointing --fsdp_activation_checkpointing_offload
        --megatron_lm_tp_degree --megatron_lm_pp_degree --megatron_lm_num_micro_batches
        --megatron_lm_sequence_parallelism --megatron_lm_recompute_activations
        --megatron_lm_use_distributed_optimizer --megatron_lm_gradient_clipping
        --megatron_lm_context_parallel_size --megatron_lm_expert_model_parallel_size
        --megatron_lm_expert_tensor_parallel_size --megatron_lm_attention_backend --megatron_lm_attention_dropout
        --megatron_lm_attention_softmax_in_fp32 --megatron_lm_calculate_per_token_loss
        --megatron_lm_decoder_last_pipeline_num_layers --megatron_lm_eod_mask_loss --megatron_lm_hidden_dropout
        --megatron_lm_no_load_optim --megatron_lm_no_save_optim --megatron_lm_optimizer_cpu_offload
        --megatron_lm_overlap_cpu_optimizer_d2h_h2d --megatron_lm_recompute_granularity
        --megatron_lm_recompute_method --megatron_lm_recompute_num_layers --megatron_lm_use_custom_fsdp
        --megatron_lm_use_precision_aware_optimizer --megatron_lm_use_rotary_position_embeddings
        --fp8_backend --fp8_margin --fp8_interval --fp8_format
        --fp8_amax_history_len --fp8_amax_compute_algo --fp8_override_linear_precision --fp8_opt_level
        --fp8_enable_fsdp_float8_all_gather --fp8_pad_inner_dim --parallelism_config_dp_replicate_size
        --parallelism_config_dp_shard_size --parallelism_config_tp_size --parallelism_config_cp_size
        --parallelism_config_cp_backend --parallelism_config_cp_comm_strategy --parallelism_config_sp_size
        --parallelism_config_sp_backend --parallelism_config_sp_seq_length
        --parallelism_config_sp_seq_length_is_variable --parallelism_config_sp_attn_implementation
        --aws_access_key_id --aws_secret_access_key --main_training_function --mpirun_hostfile --vm --env"""),
    short={"-h": "--help", "-m": "--module", "-q": "--quiet", "-t": "--tee"},
    abbrev=False,
    values=_kinds(
        {"--mixed_precision": ("no", "fp16", "bf16", "fp8"),
         "--dynamo_backend": ("no", "eager", "aot_eager", "inductor", "aot_ts_nvfuser", "nvprims_nvfuser",
                              "cudagraphs", "ofi", "fx2trt", "onnxrt", "tensorrt", "aot_torchxla_trace_once",
                              "torhchxla_trace_once", "tvm"),
         "--dynamo_mode": ("default", "reduce-overhead", "max-autotune"), "--fsdp_version": ("1", "2"),
         "--fp8_backend": ("ao", "te", "msamp"), "--fp8_format": ("HYBRID", "E4M3", "E5M2"),
         "--fp8_amax_compute_algo": ("max", "most_recent"), "--fp8_opt_level": ("O1", "O2"),
         "--parallelism_config_cp_backend": ("torch",), "--parallelism_config_sp_backend": ("deepspeed",)},
        int="""--num_processes --num_machines --num_cpu_threads_per_process --machine_rank --main_process_port
            --max_restarts --zero_stage --gradient_accumulation_steps --fsdp_min_num_params --megatron_lm_tp_degree
            --megatron_lm_decoder_last_pipeline_num_layers --megatron_lm_pp_degree --megatron_lm_num_micro_batches
            --megatron_lm_recompute_num_layers --megatron_lm_expert_model_parallel_size
            --megatron_lm_context_parallel_size --megatron_lm_expert_tensor_parallel_size --fp8_margin
            --fp8_interval --fp8_amax_history_len --parallelism_config_dp_replicate_size
            --parallelism_config_dp_shard_size --parallelism_config_tp_size --parallelism_config_cp_size
            --parallelism_config_sp_size""",
        float="""--monitor_interval --gradient_clipping --megatron_lm_gradient_clipping
            --megatron_lm_attention_dropout --megatron_lm_hidden_dropout""",
        bool="--fp8_enable_fsdp_float8_all_gather --fp8_pad_inner_dim", bools="--fp8_override_linear_precision"),
)

LAUNCHER_CLIS: Mapping[str, LauncherCli] = {"torchrun": TORCHRUN, "accelerate": ACCELERATE}


@dataclass(frozen=True)
class Word:
    """What the launcher makes of ``launcher.extra-args[index]``: ``option`` is its documented spelling when the
    word names one (exactly, by its short form, or as an abbreviation); ``value`` is that option's value and
    ``value_index`` the word that holds it (this one for ``=VALUE``, the next for a separate word); ``problem``
    says why the launcher would refuse it or read it differently from how it is written (R14)."""

    index: int
    option: str | None = None
    problem: str | None = None
    value: str | None = None
    value_index: int | None = None


def read_extra_args(launcher: str, args: Sequence[str]) -> list[Word]:
    """Read ``args`` as the launcher's parser would, each option word's option, value and problem (see
    :class:`Word`; an option's value gets no entry of its own). [] for the srun launcher, which takes no extra
    arguments (R14)."""
    cli = LAUNCHER_CLIS.get(launcher)
    if cli is None:
        return []
    out: list[Word] = []
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--" or not _option_like(cli, word):
            out.append(Word(i, problem=(
                f"{word!r} is not an option: {cli.title} would take it as the program, and ntui's worker as the "
                "program's arguments. Put the program's arguments in `args`")))
            break  # the launcher reads no option after the program
        option, value, problem = _one(cli, word)
        value_index = None if value is None else i
        nxt = args[i + 1] if i + 1 < len(args) else None
        takes_next = nxt is not None and nxt != "--" and not _option_like(cli, nxt)
        if option is None or option in cli.flags or value is not None:
            takes_next = takes_next and option is None  # an unknown option's value goes with it: one problem
        elif takes_next:
            value, value_index = nxt, i + 1
        else:
            problem = problem or (f"{word} needs a value ({option}=VALUE); {cli.title} would stop at start with "
                                  "'expected one argument'")
        kind = cli.values.get(option or "")
        if problem is None and kind is not None and value is not None and (why := value_problem(kind, value)):
            problem = f"{word}: the value {value!r} is refused ({option} {why}); {cli.title} would stop at start"
        out.append(Word(i, option, problem, value if option is not None else None, value_index))
        i += 2 if takes_next else 1
    return out


def _one(cli: LauncherCli, word: str) -> tuple[str | None, str | None, str | None]:
    """(documented option, its attached value, problem) of one option word."""
    if not word.startswith("--"):  # -X, -XVALUE
        option = cli.short.get(word[:2])
        if option is None:
            return None, None, _unknown(cli, word, [])
        attached = word[2:] or None
        if attached is not None and option in cli.flags:
            return option, attached, f"{word}: {word[:2]} ({option}) takes no value; {cli.title} would stop at start"
        return option, attached, None
    name, eq, value = word.partition("=")
    full = cli.full(name)
    attached = value if eq else None
    if full is None:
        candidates = cli.prefixed(name)
        if not cli.abbrev or not candidates:
            return None, None, _unknown(cli, name, candidates)
        if len(candidates) > 1:
            return None, None, (f"{name} is an ambiguous abbreviation ({', '.join(candidates)}): {cli.title} "
                                "would stop at start. Write the option in full")
        return candidates[0], attached, (f"{name} abbreviates {candidates[0]}; write it in full ({cli.title} "
                                         f"reads it as {candidates[0]}, past ntui's checks, or, on some Python "
                                         "versions, refuses it as ambiguous)")
    if attached is not None and full in cli.flags:
        return full, attached, f"{name} takes no value; {cli.title} would stop at start ('ignored explicit argument')"
    return full, attached, None


def _unknown(cli: LauncherCli, name: str, candidates: Sequence[str]) -> str:
    hint = f" (it takes no abbreviations: {', '.join(candidates)}?)" if candidates else ""
    return (f"{name} is not an option of {cli.title} ({cli.version}){hint}; it would stop at start with "
            "'unrecognized arguments'")


def _option_like(cli: LauncherCli, word: str) -> bool:
    """Whether argparse takes ``word`` for an option (else a value or the program): it starts with ``-`` and is
    longer than that, and names an option (exactly, with ``=VALUE``, by a prefix or a short form), or else is
    neither a negative number nor text with a space."""
    if not word.startswith("-") or word == "-":
        return False
    name = word.partition("=")[0]
    if (cli.full(name) is not None or word[:2] in cli.short
            or (cli.abbrev and word.startswith("--") and cli.prefixed(name))):
        return True
    return not (_NEGATIVE.match(word) or " " in word)


#: argparse's own test for a negative number (read as a value when no option looks like one).
_NEGATIVE = re.compile(r"^-\d+$|^-\d*\.\d+$")
