from django.urls import path

from reflection.api import views

urlpatterns = [
    path("users/<str:user_id>/traits/", views.UserTraitsApi.as_view(), name="user-traits"),
    path(
        "users/<str:user_id>/prompt-context/",
        views.PromptContextApi.as_view(),
        name="user-prompt-context",
    ),
    path("traits/<uuid:trait_id>/", views.TraitDetailApi.as_view(), name="trait"),
    path("traits/<uuid:trait_id>/veto/", views.TraitVetoApi.as_view(), name="trait-veto"),
    path(
        "reflection/cycles/",
        views.ReflectionCycleListCreateApi.as_view(),
        name="reflection-cycles",
    ),
    path(
        "reflection/cycles/<uuid:cycle_id>/",
        views.ReflectionCycleDetailApi.as_view(),
        name="reflection-cycle",
    ),
]
