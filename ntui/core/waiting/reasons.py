"""Slurm's job state reasons in words: every name Slurm 22.05, 24.11 and 26.05 print (``squeue %r``, ``scontrol``'s
``Reason=``), what it means for the job and what to do about it.

Pure data and one look-up, :func:`reason_text`. ``tests/data/slurm/reasons-<version>.txt`` hold the names of each
tested release (extracted from Slurm's reason table, ``tests/data/slurm/extract-reasons.sh``) and a test asserts
that every one of them has its own text here (none comes back ``known=False``).

Most names are QOS and association limits of one grammar (``QOSMaxGRESPerUser``, ``AssocGrpCPURunMinutesLimit``,
``MaxNodePerAccount``, ...); they are read by :func:`_limit_text` rather than spelled out 150 times. The others
are in :data:`_TEXTS`.

What squeue prints in the reason column is sometimes not a name but the controller's own description of it (a
``state_desc``: "ReqNodeNotAvail, UnavailableNodes:nid001", "Job is at or exceeds QOS normal's group wall limit
..."). :func:`split_reason` separates a leading name from such words; words without a known name are Slurm's own
text and are shown as they are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

__all__ = ["Kind", "ReasonText", "reason_text", "split_reason"]


class Kind(str, Enum):
    """What a reason asks of the "why" (:mod:`ntui.core.waiting.why`): which facts explain it."""

    RESOURCES = "resources"  # waits for nodes/CPUs/GPUs to free up: start estimate, priority
    PRIORITY = "priority"  # others are ahead in the queue: start estimate, priority breakdown
    DEPENDENCY = "dependency"  # the states of the jobs it depends on
    QOS_LIMIT = "qos-limit"  # a QOS limit: the QOS's limits (sacctmgr)
    ASSOC_LIMIT = "assoc-limit"  # an association limit: the association's limits (sacctmgr)
    HELD = "held"  # held by its user or an administrator
    TIME = "time"  # a begin time, a reservation not started yet
    CLUSTER = "cluster"  # a partition, node, licence or the controller: nothing the user changes
    STARTING = "starting"  # about to run (prolog, cleaning up a requeue)
    ENDED = "ended"  # why a job ended (shown for ended jobs)
    OTHER = "other"


@dataclass(frozen=True)
class ReasonText:
    """One reason in words. ``text`` completes "It waits because ..." / "It ended because ..." (no capital, no
    full stop); ``fix`` is what the user can do ("" when nothing); ``never``: it will not start unless the job or
    the site changes (the why says so first)."""

    name: str
    text: str
    kind: Kind
    fix: str = ""
    never: bool = False
    known: bool = True  # False: a name this table does not have (a newer Slurm's): the name is shown as it is
    limit: str = ""  # the QOS/association limit behind it, as sacctmgr and the docs name it (MaxJobsPerUser)
    tres: str = ""  # the trackable resource of that limit (cpu, node, mem, gres/, ...; "" for job counts, time)


_K = Kind
_LIMIT_FIX = "it starts by itself when the usage drops; or ask for less, or use another QOS or account"

# fmt: off
_TEXTS: dict[str, tuple[str, Kind, str, bool]] = {
    # name: (text, kind, fix, never)
    "None": ("the scheduler has not looked at it yet (no reason set)", _K.OTHER, "", False),
    "InvalidReason": ("Slurm gave no valid reason", _K.OTHER, "", False),
    "Priority": ("jobs with a higher priority are ahead of it for the resources it needs", _K.PRIORITY,
                 "a smaller or shorter job may start sooner in a backfill gap (which would: w in the jobs view)",
                 False),
    "Resources": ("it waits for the resources it asked for to free up", _K.RESOURCES,
                  "fewer nodes or a shorter time limit may start sooner (which would: w in the jobs view)", False),
    "Dependency": ("it waits for the jobs it depends on", _K.DEPENDENCY, "", False),
    "DependencyNeverSatisfied": ("its dependency can never be satisfied: a job it depends on did not end the way "
                                 "the dependency asks", _K.DEPENDENCY,
                                 "cancel it, or change its dependency (scontrol update JobId=ID Dependency=...)",
                                 True),
    "Prolog": ("its nodes are running the site's prolog: it is about to start", _K.STARTING, "", False),
    "Cleaning": ("it was requeued and its last run is still being cleaned up", _K.STARTING, "", False),
    "BeginTime": ("it waits for the begin time it was given (--begin), or for the delay after a requeue",
                  _K.TIME, "", False),
    "Reservation": ("it waits for its reservation to start", _K.TIME, "", False),
    "ReservationDeleted": ("the reservation it ran under was deleted, and it is held", _K.HELD,
                           "release it to run outside the reservation, or cancel it", False),
    "ReservationInvalid": ("the reservation it asks for is not valid for it", _K.CLUSTER,
                           "change or drop its reservation (scontrol update JobId=ID Reservation=)", True),
    "JobHeldUser": ("it is held by its user", _K.HELD, "release it: ntui release ID (or h in the jobs view)", False),
    "JobHeldAdmin": ("it is held by an administrator", _K.HELD, "only an administrator can release it", False),
    "JobHoldMaxRequeue": ("it was requeued more times than the site allows and is now held", _K.HELD,
                          "find out why it keeps failing, then release it", False),
    "JobArrayTaskLimit": ("its array already runs as many tasks at once as its --array=...%N allows", _K.OTHER,
                          "the next task starts when a running one ends; raise the %N with scontrol update "
                          "JobId=ID ArrayTaskThrottle=N", False),
    "PartitionNodeLimit": ("it asks for more (or fewer) nodes than its partition allows (MaxNodes/MinNodes)",
                           _K.CLUSTER, "ask for a node count the partition allows, or another partition", True),
    "PartitionTimeLimit": ("its time limit is over its partition's MaxTime", _K.CLUSTER,
                           "shorten its time limit (scontrol update JobId=ID TimeLimit=...) or use another "
                           "partition", True),
    "PartitionDown": ("its partition is down", _K.CLUSTER, "it starts once an administrator brings it up; or use "
                      "another partition", False),
    "PartitionInactive": ("its partition is inactive: no job starts there", _K.CLUSTER,
                          "use another partition", False),
    "PartitionConfig": ("its partition's configuration does not allow it (a limit or setting of the partition)",
                        _K.CLUSTER, "compare the job with scontrol show partition, or use another partition", True),
    "ReqNodeNotAvail": ("a node it needs is down, drained, or reserved (often for maintenance)", _K.CLUSTER,
                        "it starts when the nodes are back; drop a --nodelist that names them", False),
    "NodeDown": ("a node it needs (or ran on) is down", _K.CLUSTER, "", False),
    "FrontEndDown": ("the front-end node it needs is down", _K.CLUSTER, "", False),
    "Licenses": ("it waits for the licences it asked for (--licenses)", _K.RESOURCES, "", False),
    "BurstBufferResources": ("it waits for burst buffer space", _K.RESOURCES, "", False),
    "BurstBufferStageIn": ("its burst buffer files are being staged in", _K.STARTING, "", False),
    "BurstBufferOperation": ("a burst buffer operation failed", _K.CLUSTER, "", False),
    "NvidiaImexChannels": ("the NVIDIA IMEX channels it needs are used by other jobs", _K.RESOURCES, "", False),
    "MpiPortsBusy": ("the MPI ports Slurm reserves (MpiParams=ports) are all in use", _K.RESOURCES, "", False),
    "MaxPoweredUpNodes": ("the cluster already has as many nodes powered up as it allows", _K.CLUSTER, "", False),
    "PowerNotAvail": ("the power its nodes need is not available (power capping)", _K.CLUSTER, "", False),
    "PowerReserved": ("the power it needs is reserved for other jobs (power capping)", _K.CLUSTER, "", False),
    "BlockFreeAction": ("its nodes are being freed by the select plugin", _K.CLUSTER, "", False),
    "BlockMaxError": ("its nodes hit the select plugin's error limit", _K.CLUSTER, "", False),
    "SchedDefer": ("the scheduler deferred it at submission (SchedulerParameters=defer): a later pass looks at it",
                   _K.OTHER, "", False),
    "FedJobLock": ("the federation lock for it could not be taken yet", _K.CLUSTER, "", False),
    "SystemFailure": ("Slurm itself failed for this job", _K.CLUSTER, "tell the site's support", False),
    "BadConstraints": ("its constraints (features, node list, GRES) can never be met by the nodes it may use",
                       _K.CLUSTER, "change --constraint/--gres/--nodelist", True),
    "Constraints": ("its constraints cannot be met right now", _K.CLUSTER, "", False),
    "InvalidAccount": ("its account is not valid for it", _K.ASSOC_LIMIT, "use an account you belong to "
                       "(sacctmgr show assoc user=$USER)", True),
    "InvalidQOS": ("its QOS is not valid for it", _K.QOS_LIMIT, "use a QOS your account may use", True),
    "AccountNotAllowed": ("its account may not use its partition (AllowAccounts)", _K.CLUSTER,
                          "use another account or partition", True),
    "QOSNotAllowed": ("its QOS may not be used by its account or in its partition", _K.QOS_LIMIT,
                      "use another QOS (sacctmgr show assoc user=$USER format=account,qos)", True),
    "AccountingPolicy": ("an accounting policy (a QOS or association limit) holds it", _K.QOS_LIMIT,
                         _LIMIT_FIX, False),
    "AssociationJobLimit": ("its association (account, user, partition) already runs as many jobs as it "
                            "allows", _K.ASSOC_LIMIT, "it starts when one of those jobs ends", False),
    "AssociationResourceLimit": ("its association's resource limit is reached", _K.ASSOC_LIMIT, _LIMIT_FIX, False),
    "AssociationTimeLimit": ("its association's time limit is reached", _K.ASSOC_LIMIT, _LIMIT_FIX, False),
    "QOSJobLimit": ("its QOS already runs as many jobs as it allows", _K.QOS_LIMIT,
                    "it starts when one of those jobs ends", False),
    "QOSResourceLimit": ("its QOS's resource limit is reached", _K.QOS_LIMIT, _LIMIT_FIX, False),
    "QOSTimeLimit": ("its QOS's time limit is reached", _K.QOS_LIMIT, _LIMIT_FIX, False),
    "QOSUsageThreshold": ("its account's usage is over its QOS's UsageThreshold", _K.QOS_LIMIT,
                          "it starts once the usage decays; or use another QOS", False),
    "MaxMemPerLimit": ("the memory it asks for per CPU or per node is over the limit (MaxMemPerCPU/Node)",
                       _K.CLUSTER, "ask for less memory per CPU or node", True),
    # why a job ended (the reason of ended jobs)
    "NonZeroExitCode": ("its batch script exited with a non-zero code", _K.ENDED, "", False),
    "RaisedSignal": ("a signal killed it", _K.ENDED, "", False),
    "TimeLimit": ("it reached its time limit", _K.ENDED, "", False),
    "InactiveLimit": ("its srun was inactive for longer than the site's InactiveLimit", _K.ENDED, "", False),
    "JobLaunchFailure": ("Slurm could not launch it on its nodes", _K.ENDED, "", False),
    "OutOfMemory": ("it ran out of memory", _K.ENDED, "", False),
    "DeadLine": ("it reached its --deadline", _K.ENDED, "", False),
}
# fmt: on

# ---------------------------------------------------------------- the QOS / association limit grammar

_RESOURCE = {
    "BB": "burst buffer", "Billing": "billing", "CPU": "CPUs", "Cpu": "CPUs", "Energy": "energy",
    "GRES": "GPUs or other GRES", "License": "licences", "Mem": "memory", "Memory": "memory", "Node": "nodes",
    "Unknown": "a trackable resource",
}
_TRES = {"BB": "bb", "Billing": "billing", "CPU": "cpu", "Cpu": "cpu", "Energy": "energy", "GRES": "gres/",
         "License": "license/", "Mem": "mem", "Memory": "mem", "Node": "node"}
_MASS = frozenset({"burst buffer", "billing", "energy", "memory", "a trackable resource"})


def _fewer(res: str) -> str:
    return f"{'less' if res in _MASS else 'fewer'} {res}"

_LIMIT_RE = re.compile(
    r"^(?P<owner>QOS|Assoc)?(?P<scope>Grp|Max|Min)"
    r"(?P<what>BB|Billing|CPU|Cpu|Energy|GRES|License|Memory|Mem|Node|Unknown|SubmitJobs|SubmitJob|Jobs|"
    r"WallDuration|Wall)"
    r"(?P<mins>RunMinutes|RunMins|Minutes)?(?P<per>PerJob|PerNode|PerUser|PerAccount)?(?:Limit|NotSatisfied)?$"
)


def _limit_text(name: str) -> ReasonText | None:
    """A QOS or association limit (None: not one). Names without an owner (``MaxNodePerAccount``) are QOS
    limits per account (Slurm's ``WAIT_QOS_MAX_*_PER_ACCT``); ``Max*RunMinsPerUser`` are QOS limits too."""
    m = _LIMIT_RE.match(name)
    if m is None:
        return None
    owner, scope, what, mins, per = (m.group(g) or "" for g in ("owner", "scope", "what", "mins", "per"))
    qos = owner != "Assoc"
    whose = "its QOS" if qos else "its association (account, user, partition)"
    kind = Kind.QOS_LIMIT if qos else Kind.ASSOC_LIMIT
    res = _RESOURCE.get(what, "")
    key = ("GrpTRES" if scope == "Grp" else f"{scope}TRES") + ("RunMins" if mins.startswith("Run") else
                                                                "Mins" if mins else "")
    found = _limit_reason(name, owner, scope, what, mins, per, qos, whose, kind, res, key)
    label = _limit_label(owner, scope, what, mins, per, key)
    return ReasonText(found.name, found.text, found.kind, found.fix, found.never, limit=label,
                      tres=_TRES.get(what, ""))


def _limit_label(owner: str, scope: str, what: str, mins: str, per: str, key: str) -> str:
    """The limit's name in sacctmgr's listing (:data:`ntui.core.slurm.sacctmgr.QOS_LIMITS` / ``ASSOC_LIMITS``)."""
    if what in ("Jobs", "SubmitJobs", "SubmitJob"):
        base = "GrpSubmitJobs" if scope == "Grp" and what != "Jobs" else "GrpJobs" if scope == "Grp" else (
            "MaxSubmitJobs" if what != "Jobs" else "MaxJobs")
        if scope == "Max" and owner != "Assoc":
            base += "PerAccount" if per == "PerAccount" else "PerUser"
        return base
    if what in ("Wall", "WallDuration"):
        return "GrpWall" if scope == "Grp" else "MaxWall"
    if scope == "Min":
        return "MinTRESPerJob"
    if scope == "Grp":
        return key
    if per in ("PerUser", "PerAccount"):
        return f"{key}{per}"
    return f"{key}PerJob" if per != "PerNode" else "MaxTRESPerNode"


def _limit_reason(name: str, owner: str, scope: str, what: str, mins: str, per: str, qos: bool, whose: str,
                  kind: Kind, res: str, key: str) -> ReasonText:
    if what in ("Jobs", "SubmitJobs", "SubmitJob"):
        submit = what.startswith("Submit")
        jobs = "submitted" if submit else "running"
        if scope == "Grp":
            return ReasonText(name, f"the jobs of everyone in {whose} together are as many {jobs} jobs as it allows "
                              f"(Grp{'Submit' if submit else ''}Jobs)", kind,
                              "it starts when some of those jobs end", False)
        who = "your account already has" if per == "PerAccount" else "you already have"
        return ReasonText(name, f"{who} as many {jobs} jobs as {whose} allows "
                          f"(Max{'Submit' if submit else ''}Jobs{'PerAccount' if per == 'PerAccount' else ''})",
                          kind, "it starts when one of those jobs ends", False)
    if what in ("Wall", "WallDuration"):
        if scope == "Grp":
            return ReasonText(name, f"{whose} has used up its wall-time budget (GrpWall)", kind,
                              "it starts only when the usage decays or an administrator raises the budget", False)
        return ReasonText(name, f"its time limit is over the most {whose} allows per job (MaxWall)", kind,
                          "shorten its time limit (scontrol update JobId=ID TimeLimit=...) or use another QOS",
                          True)
    if scope == "Min":
        return ReasonText(name, f"it asks for {_fewer(res)} than {whose} requires per job (MinTRESPerJob)", kind,
                          f"ask for more {res.removeprefix('a ')}, or use another QOS", True)
    if scope == "Grp":
        if mins == "Minutes":
            return ReasonText(name, f"{whose} has used up its budget of {res} × minutes ({key})", kind,
                              "it starts only when the usage decays or an administrator raises the budget", False)
        if mins:
            return ReasonText(name, f"the running jobs of {whose} together hold as many {res} × minutes of time "
                              f"left as it allows ({key})", kind,
                              "it starts as those jobs run down or end; a shorter time limit needs fewer", False)
        return ReasonText(name, f"the jobs of everyone in {whose} together use as many {res} at once as it allows "
                          "(GrpTRES)", kind, "it starts when some of those jobs end", False)
    # Max
    if per in ("PerUser", "PerAccount"):
        who = "your account's" if per == "PerAccount" else "your"
        if mins:
            return ReasonText(name, f"{who} running jobs in {whose} hold as many {res} × minutes of time left as "
                              f"it allows per {per[3:].lower()} (MaxTRESRunMins{per})", kind,
                              "it starts as those jobs run down or end; a shorter time limit needs fewer", False)
        return ReasonText(name, f"{who} running jobs already use as many {res} as {whose} allows per "
                          f"{per[3:].lower()} (MaxTRES{per})", kind, "it starts when one of those jobs ends; "
                          "or ask for less", False)
    if mins:
        return ReasonText(name, f"its {res} × time limit is over the most {whose} allows per job ({key}PerJob)",
                          kind, f"shorten its time limit or ask for {_fewer(res)}, or use another QOS", True)
    where = "per node" if per == "PerNode" else "per job"
    return ReasonText(name, f"it asks for more {res} than {whose} allows {where} (MaxTRESPer"
                      f"{'Node' if per == 'PerNode' else 'Job'})", kind,
                      f"ask for {_fewer(res)}, or use another QOS", True)


def reason_text(name: str) -> ReasonText:
    """The words for one reason name (case as Slurm prints it). A name Slurm may add later comes back
    ``known=False`` with the name in it, never an error."""
    found = _TEXTS.get(name)
    if found is not None:
        text, kind, fix, never = found
        return ReasonText(name, text, kind, fix, never)
    limit = _limit_text(name)
    if limit is not None:
        return limit
    return ReasonText(name, f"Slurm says {name}", Kind.OTHER, known=False)

_NAME_RE = re.compile(r"^\(?(?P<name>[A-Za-z]+)\)?(?:(?:,\s*|:\s*|\s+)(?P<rest>.*))?$")


def split_reason(raw: str) -> tuple[str, str]:
    """Slurm's reason column -> (the reason name, the controller's words after it). ``"ReqNodeNotAvail,
    UnavailableNodes:nid001"`` -> ``("ReqNodeNotAvail", "UnavailableNodes:nid001")``; ``"Resources"`` ->
    ``("Resources", "")``; words without a known name first (a ``state_desc`` such as "Job is at or exceeds QOS
    normal's group wall limit ...") -> ``("", the words)``; scontrol's ``_`` for spaces is undone there."""
    text = raw.strip()
    if not text or text in ("(null)", "None"):
        return ("None", "") if text == "None" else ("", "")
    m = _NAME_RE.match(text)
    if m is not None:
        name = m.group("name")
        if name in _TEXTS or _LIMIT_RE.match(name):
            return name, (m.group("rest") or "").strip()
    return "", text.replace("_", " ") if " " not in text else text
