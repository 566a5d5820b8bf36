from django.urls import path

from memories.api import views

urlpatterns = [
    path("memories/", views.MemoryListCreateApi.as_view(), name="memories"),
    path("memories/batch/", views.MemoryBatchApi.as_view(), name="memories-batch"),
    path("memories/<uuid:memory_id>/", views.MemoryDetailApi.as_view(), name="memory"),
    path("memories/<uuid:memory_id>/supersede/", views.MemorySupersedeApi.as_view()),
    path("memories/<uuid:memory_id>/invalidate/", views.MemoryInvalidateApi.as_view()),
    path("memories/<uuid:memory_id>/history/", views.MemoryHistoryApi.as_view()),
    path("memories/<uuid:memory_id>/versions/", views.MemoryVersionsApi.as_view()),
    path("memories/<uuid:memory_id>/links/", views.MemoryLinksApi.as_view()),
    path("memories/<uuid:memory_id>/bulk/", views.MemoryBulkApi.as_view()),
    path("recall/", views.RecallApi.as_view(), name="recall"),
    path("search/", views.MemorySearchApi.as_view(), name="search"),
    path("search/scored/", views.MemoryScoredSearchApi.as_view(), name="search-scored"),
    path("sessions/", views.SessionCreateApi.as_view(), name="sessions"),
    path("sessions/<uuid:session_id>/messages/", views.SessionMessageApi.as_view()),
    path("sessions/<uuid:session_id>/end/", views.SessionEndApi.as_view()),
    path("users/<str:user_id>/", views.UserApi.as_view(), name="user"),
    path("users/<str:user_id>/export/", views.UserExportApi.as_view(), name="user-export"),
    path("users/<str:user_id>/forget/", views.UserForgetApi.as_view(), name="user-forget"),
    path("users/<str:user_id>/entities/", views.UserEntitiesApi.as_view(), name="user-entities"),
    # A str, not a uuid: an id that is no uuid is a VALIDATION_ERROR on `entity_id`.
    path(
        "users/<str:user_id>/entities/<str:entity_id>/",
        views.UserEntityApi.as_view(),
        name="user-entity",
    ),
]
