from django.urls import path

from evolution.api import views

urlpatterns = [
    path("soul/", views.SoulApi.as_view(), name="soul"),
    path("soul/bootstrap/", views.SoulBootstrapApi.as_view(), name="soul-bootstrap"),
    path("soul/contract/", views.SafetyContractApi.as_view(), name="soul-contract"),
    path("soul/proposals/", views.SoulProposalApi.as_view(), name="soul-proposals"),
    path("soul/rollback/", views.SoulRollbackApi.as_view(), name="soul-rollback"),
    path("soul/versions/", views.SoulVersionListApi.as_view(), name="soul-versions"),
    path(
        "soul/versions/<int:version>/",
        views.SoulVersionDetailApi.as_view(),
        name="soul-version",
    ),
    path(
        "soul/versions/<int:version>/evaluate/",
        views.SoulEvaluateApi.as_view(),
        name="soul-version-evaluate",
    ),
    path(
        "soul/versions/<int:version>/apply/",
        views.SoulApplyApi.as_view(),
        name="soul-version-apply",
    ),
    path(
        "soul/versions/<int:version>/veto/",
        views.SoulVetoApi.as_view(),
        name="soul-version-veto",
    ),
]
