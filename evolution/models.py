"""The agents, each with its SOUL document's versions, the Core Safety Contract they are
evaluated against, and the append-only log of every state change (docs/evolution.md).

What must hold whatever the caller does lives in the database: the transitions a version may
make (and that only a proposal whose evaluation passed becomes active), that a version's
content and number never change, that an evaluation is recorded once, that at most one version
of an agent is active, and that the log and the contract versions are append-only.
"""

import pgtrigger
from django.db import models
from django.db.models import Q
from django.db.models.functions import Now

from core.db.schema import append_only, choice_constraint


class SoulStatus(models.TextChoices):
    ACTIVE = "active"
    PROPOSED = "proposed"
    SUPERSEDED = "superseded"
    ROLLED_BACK = "rolled_back"
    VETOED = "vetoed"


class SoulAuthor(models.TextChoices):
    AGENT = "agent"
    BOOTSTRAP = "bootstrap"
    SYSTEM = "system"
    USER = "user"


# from → the statuses it may become (an UPDATE that keeps the status is not a transition).
SOUL_TRANSITIONS: dict[str, tuple[str, ...]] = {
    SoulStatus.PROPOSED: (SoulStatus.ACTIVE, SoulStatus.VETOED),
    SoulStatus.ACTIVE: (SoulStatus.SUPERSEDED, SoulStatus.ROLLED_BACK, SoulStatus.VETOED),
    SoulStatus.SUPERSEDED: (),
    SoulStatus.ROLLED_BACK: (),
    SoulStatus.VETOED: (),
}
ALLOWED_TRANSITIONS_SQL = " OR ".join(
    f"(OLD.status = '{old}' AND NEW.status IN ({', '.join(repr(str(n)) for n in new)}))"
    for old, new in SOUL_TRANSITIONS.items()
    if new
)

# Who and why, set per transaction by the services (core.db.actor, evolution.services).
LOG_PRELUDE = """
DECLARE
    actor text := coalesce(nullif(current_setting('neuromem.actor', true), ''), 'system');
    reason text := coalesce(current_setting('neuromem.reason', true), '');
BEGIN"""


def numbered_per_agent(
    *, table: str, version_check: str, first: int
) -> list[models.BaseConstraint]:
    """An agent's numbered versions (of its SOUL, of its contract): one row a number, numbered
    from `first`. The names are the schema's own."""
    return [
        models.UniqueConstraint(fields=["agent", "version"], name=f"{table}_number_per_agent"),
        models.CheckConstraint(name=version_check, condition=Q(version__gte=first)),
    ]


class Agent(models.Model):
    """An agent with its own SOUL, named after the API client that owns it (a client may own
    several; its default one is made with the client). An agent without a client is the
    deployment's own, reached by staff only."""

    client = models.ForeignKey(
        "api.ApiClient", on_delete=models.PROTECT, null=True, blank=True, related_name="agents"
    )
    name = models.CharField(max_length=100)
    is_default = models.BooleanField(default=False)
    # With the runtime guardrail on, a high-risk call is refused while the agent's latest
    # guard check failed (GuardState).
    guard_enabled = models.BooleanField(default=False, db_default=False)
    created_at = models.DateTimeField(db_default=Now())

    class Meta:
        db_table = "agents"
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["client", "name"], nulls_distinct=False, name="agents_name_per_client"
            ),
            models.UniqueConstraint(
                fields=["client"],
                condition=Q(is_default=True),
                nulls_distinct=False,
                name="agents_one_default_per_client",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class SoulVersion(models.Model):
    """A full snapshot of an agent's SOUL document; at most one per agent is active (enforced
    by the database)."""

    agent = models.ForeignKey(Agent, on_delete=models.PROTECT, related_name="soul_versions")
    version = models.IntegerField()
    content = models.TextField()
    status = models.CharField(max_length=16, choices=SoulStatus)
    proposal = models.JSONField(null=True, blank=True)
    eval_result = models.JSONField(null=True, blank=True)
    created_by = models.CharField(max_length=32, choices=SoulAuthor)
    created_at = models.DateTimeField(db_default=Now())

    class Meta:
        db_table = "soul_versions"
        ordering = ["agent", "version"]
        constraints = [
            *numbered_per_agent(table="soul_versions", version_check="chk_soul_version", first=0),
            models.UniqueConstraint(
                fields=["agent"], condition=Q(status="active"), name="soul_versions_one_active"
            ),
            choice_constraint(name="chk_soul_status", field="status", choices=SoulStatus),
            choice_constraint(name="chk_soul_created_by", field="created_by", choices=SoulAuthor),
        ]
        triggers = [
            # A version is born proposed, or active (the bootstrap, or a rollback's copy).
            pgtrigger.Trigger(
                name="soul_versions_born",
                operation=pgtrigger.Insert,
                when=pgtrigger.Before,
                func="""
                IF NEW.status NOT IN ('proposed', 'active') THEN
                    RAISE EXCEPTION 'SOUL version % cannot be created %', NEW.version,
                        NEW.status USING ERRCODE = 'check_violation';
                END IF;
                RETURN NEW;""",
            ),
            pgtrigger.Trigger(
                name="soul_versions_transitions",
                operation=pgtrigger.Update,
                when=pgtrigger.Before,
                func=f"""
                IF (NEW.agent_id, NEW.version, NEW.content, NEW.created_by, NEW.proposal,
                    NEW.created_at)
                   IS DISTINCT FROM
                   (OLD.agent_id, OLD.version, OLD.content, OLD.created_by, OLD.proposal,
                    OLD.created_at) THEN
                    RAISE EXCEPTION 'SOUL version %: only its status and evaluation change',
                        OLD.version USING ERRCODE = 'check_violation';
                END IF;
                IF OLD.eval_result IS NOT NULL
                   AND NEW.eval_result IS DISTINCT FROM OLD.eval_result THEN
                    RAISE EXCEPTION 'SOUL version %: evaluated already', OLD.version
                        USING ERRCODE = 'check_violation';
                END IF;
                IF NEW.eval_result IS DISTINCT FROM OLD.eval_result
                   AND OLD.status <> 'proposed' THEN
                    RAISE EXCEPTION 'SOUL version %: only a proposal is evaluated', OLD.version
                        USING ERRCODE = 'check_violation';
                END IF;
                IF NEW.status IS DISTINCT FROM OLD.status THEN
                    IF NOT ({ALLOWED_TRANSITIONS_SQL}) THEN
                        RAISE EXCEPTION 'SOUL version %: % cannot become %', OLD.version,
                            OLD.status, NEW.status USING ERRCODE = 'check_violation';
                    END IF;
                    IF OLD.status = 'proposed' AND NEW.status = 'active'
                       AND coalesce((NEW.eval_result->>'passed')::boolean, false) IS NOT TRUE THEN
                        RAISE EXCEPTION 'SOUL version %: applied without a passed evaluation',
                            OLD.version USING ERRCODE = 'check_violation';
                    END IF;
                END IF;
                RETURN NEW;""",
            ),
            pgtrigger.Protect(name="soul_versions_kept", operation=pgtrigger.Delete),
            # Every state change, in the log: creation (from NULL) and each transition.
            pgtrigger.Trigger(
                name="soul_versions_log",
                operation=pgtrigger.Insert | pgtrigger.UpdateOf("status"),
                when=pgtrigger.After,
                func=LOG_PRELUDE
                + """
                IF TG_OP = 'UPDATE' AND NEW.status IS NOT DISTINCT FROM OLD.status THEN
                    RETURN NULL;
                END IF;
                INSERT INTO soul_events (agent_id, version, from_status, to_status, actor, reason)
                VALUES (NEW.agent_id, NEW.version, CASE WHEN TG_OP = 'UPDATE' THEN OLD.status END,
                        NEW.status, actor, reason);
                RETURN NULL;
                END;""",
            ),
        ]

    def __str__(self) -> str:
        return f"SOUL v{self.version} ({self.status}) of agent {self.agent_id}"


class SoulEvent(models.Model):
    """One state change of an agent's SOUL version: who, what, from, to, why (append-only)."""

    id = models.BigAutoField(primary_key=True)
    agent = models.ForeignKey(Agent, on_delete=models.PROTECT, related_name="soul_events")
    version = models.IntegerField()
    from_status = models.CharField(max_length=16, null=True, blank=True)
    to_status = models.CharField(max_length=16)
    actor = models.CharField(max_length=255)
    reason = models.TextField(blank=True, default="", db_default="")
    created_at = models.DateTimeField(db_default=Now())

    class Meta:
        db_table = "soul_events"
        ordering = ["id"]
        indexes = [models.Index(fields=["agent", "version", "id"], name="idx_soul_events_version")]
        triggers = append_only("soul_events")

    def __str__(self) -> str:
        return f"v{self.version}: {self.from_status or '∅'} → {self.to_status} by {self.actor}"


class SafetyContract(models.Model):
    """A version of an agent's Core Safety Contract. From its active SOUL's marked sections
    (evolution/contract.py): `extracted_anchors`, phrases every SOUL must keep, and
    `extracted_constraints`, rules it must keep stating; `source_hash` names the text they
    came from. Staff additions, kept across extractions: `anchors` (phrases to keep) and
    `constraints` (case-insensitive regular expressions no SOUL may match). The newest is
    current; each change is a new row (append-only), so every evaluation can name the contract
    it used."""

    agent = models.ForeignKey(Agent, on_delete=models.PROTECT, related_name="safety_contracts")
    version = models.IntegerField()
    anchors = models.JSONField(default=list)
    constraints = models.JSONField(default=list)
    extracted_anchors = models.JSONField(default=list, db_default=[])
    extracted_constraints = models.JSONField(default=list, db_default=[])
    source_hash = models.CharField(max_length=64, blank=True, default="", db_default="")
    content_hash = models.CharField(max_length=64)
    created_by = models.CharField(max_length=255)
    created_at = models.DateTimeField(db_default=Now())

    class Meta:
        db_table = "safety_contracts"
        ordering = ["agent", "-version"]
        constraints = numbered_per_agent(
            table="safety_contracts", version_check="chk_contract_version", first=1
        )
        triggers = append_only("safety_contracts")

    def __str__(self) -> str:
        return (
            f"Safety contract v{self.version} of agent {self.agent_id} ({self.content_hash[:12]})"
        )


class GuardState(models.Model):
    """An agent session's latest guard check (seed 003 §4.0.10): whether the Core Safety
    Contract's anchors were visible in the context the agent was about to send its model. One
    row per agent and session, replaced by each check; it speaks for one round only
    (GUARD_ROUND_SECONDS), never for the next."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="guard_states")
    session = models.CharField(max_length=200, blank=True)
    passed = models.BooleanField()
    error_code = models.CharField(max_length=40, blank=True)
    missing_anchors = models.JSONField(default=list)
    violated_constraints = models.JSONField(default=list)
    contract_version = models.IntegerField(null=True, blank=True)
    checked_at = models.DateTimeField()

    class Meta:
        db_table = "guard_states"
        constraints = [
            models.UniqueConstraint(fields=["agent", "session"], name="guard_states_per_session"),
        ]

    def __str__(self) -> str:
        return f"guard of agent {self.agent_id}, session '{self.session}': {self.passed}"


class GuardEventKind(models.TextChoices):
    WARNING = "guardrail_warning"  # a check failed (detection only)
    BLOCKED = "guardrail_blocked"  # a high-risk call refused
    DEGRADED = "guardrail_degraded"  # a low-risk call let through while the check failed


class GuardEvent(models.Model):
    """What the runtime guardrail saw or did, one row each (append-only): which agent and
    session, what call (`action`: an MCP tool's name or `METHOD /route`) at what risk, the
    check's error code and what was missing, and who called."""

    id = models.BigAutoField(primary_key=True)
    agent = models.ForeignKey(Agent, on_delete=models.PROTECT, related_name="guard_events")
    session = models.CharField(max_length=200, blank=True)
    kind = models.CharField(max_length=24, choices=GuardEventKind)
    action = models.CharField(max_length=200, blank=True)
    risk_level = models.CharField(max_length=8, blank=True)
    error_code = models.CharField(max_length=40, blank=True)
    detail = models.JSONField(default=dict)
    actor = models.CharField(max_length=255)
    created_at = models.DateTimeField(db_default=Now())

    class Meta:
        db_table = "guard_events"
        ordering = ["-id"]
        indexes = [models.Index(fields=["agent", "-id"], name="idx_guard_events_agent")]
        constraints = [
            choice_constraint(name="chk_guard_event_kind", field="kind", choices=GuardEventKind),
        ]
        triggers = append_only("guard_events")

    def __str__(self) -> str:
        return f"{self.kind} of agent {self.agent_id}: {self.action or 'check'}"
