from django.urls import path

from evolution.api import views

VERSION = "soul/versions/<int:version>/"

urlpatterns = [
    path("soul/", views.SoulApi.as_view(), name="soul"),
    path("soul/bootstrap/", views.SoulBootstrapApi.as_view(), name="soul-bootstrap"),
    path("soul/contract/", views.SafetyContractApi.as_view(), name="soul-contract"),
    path("soul/proposals/", views.SoulProposalApi.as_view(), name="soul-proposals"),
    path("soul/rollback/", views.SoulRollbackApi.as_view(), name="soul-rollback"),
    path("soul/versions/", views.SoulVersionListApi.as_view(), name="soul-versions"),
    path(VERSION, views.SoulVersionDetailApi.as_view(), name="soul-version"),
    path(f"{VERSION}evaluate/", views.SoulEvaluateApi.as_view(), name="soul-version-evaluate"),
    path(f"{VERSION}apply/", views.SoulApplyApi.as_view(), name="soul-version-apply"),
    path(f"{VERSION}veto/", views.SoulVetoApi.as_view(), name="soul-version-veto"),
]
