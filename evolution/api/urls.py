from django.urls import path

from evolution.api import views

VERSION = "versions/<int:version>/"


def soul_routes(prefix: str, name: str) -> list:
    """The SOUL routes under `prefix`: `soul/` (the caller's default agent) or
    `agents/<agent_id>/soul/` (that agent)."""
    routes = [
        ("", views.SoulApi, ""),
        ("bootstrap/", views.SoulBootstrapApi, "-bootstrap"),
        ("contract/", views.SafetyContractApi, "-contract"),
        ("proposals/", views.SoulProposalApi, "-proposals"),
        ("rollback/", views.SoulRollbackApi, "-rollback"),
        ("versions/", views.SoulVersionListApi, "-versions"),
        (VERSION, views.SoulVersionDetailApi, "-version"),
        (f"{VERSION}evaluate/", views.SoulEvaluateApi, "-version-evaluate"),
        (f"{VERSION}apply/", views.SoulApplyApi, "-version-apply"),
        (f"{VERSION}veto/", views.SoulVetoApi, "-version-veto"),
    ]
    return [
        path(f"{prefix}{route}", view.as_view(), name=f"{name}{suffix}")
        for route, view, suffix in routes
    ]


def guard_routes(prefix: str, name: str) -> list:
    """The runtime guardrail's routes under `prefix`: `` (the caller's default agent) or
    `agents/<agent_id>/` (that agent)."""
    return [
        path(f"{prefix}guard/check/", views.GuardCheckApi.as_view(), name=f"{name}guard-check"),
        path(
            f"{prefix}guard/events/", views.GuardEventListApi.as_view(), name=f"{name}guard-events"
        ),
    ]


urlpatterns = [
    path("agents/", views.AgentListApi.as_view(), name="agents"),
    path("agents/<int:agent_id>/", views.AgentDetailApi.as_view(), name="agent"),
    *guard_routes("", ""),
    *guard_routes("agents/<int:agent_id>/", "agent-"),
    *soul_routes("soul/", "soul"),
    *soul_routes("agents/<int:agent_id>/soul/", "agent-soul"),
]
