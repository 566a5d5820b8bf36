from django.urls import path

from reflection.api import views

USER = "users/<str:user_id>/"
CYCLES = "reflection/cycles/"
CYCLE = f"{CYCLES}<uuid:cycle_id>/"

urlpatterns = [
    path(f"{USER}traits/", views.UserTraitsApi.as_view(), name="user-traits"),
    path(f"{USER}prompt-context/", views.PromptContextApi.as_view(), name="user-prompt-context"),
    path("traits/<uuid:trait_id>/", views.TraitDetailApi.as_view(), name="trait"),
    path("traits/<uuid:trait_id>/veto/", views.TraitVetoApi.as_view(), name="trait-veto"),
    path(CYCLES, views.ReflectionCycleListCreateApi.as_view(), name="reflection-cycles"),
    path(
        f"{CYCLES}<uuid:cycle_id>/",
        views.ReflectionCycleDetailApi.as_view(),
        name="reflection-cycle",
    ),
]
