from django.urls import include, path

from memories.api import views

# A memory's routes, below memories/<memory_id>/.
memory_routes = [
    path("", views.MemoryDetailApi.as_view(), name="memory"),
    path("supersede/", views.MemorySupersedeApi.as_view()),
    path("invalidate/", views.MemoryInvalidateApi.as_view()),
    path("history/", views.MemoryHistoryApi.as_view()),
    path("versions/", views.MemoryVersionsApi.as_view()),
    path("links/", views.MemoryLinksApi.as_view()),
    path("bulk/", views.MemoryBulkApi.as_view()),
]
# An end user's routes, below users/<user_id>/.
user_routes = [
    path("", views.UserApi.as_view(), name="user"),
    path("export/", views.UserExportApi.as_view(), name="user-export"),
    path("forget/", views.UserForgetApi.as_view(), name="user-forget"),
    path("entities/", views.UserEntitiesApi.as_view(), name="user-entities"),
    # A str, not a uuid: an id that is no uuid is a VALIDATION_ERROR on `entity_id`.
    path("entities/<str:entity_id>/", views.UserEntityApi.as_view(), name="user-entity"),
]

urlpatterns = [
    path("memories/", views.MemoryListCreateApi.as_view(), name="memories"),
    path("memories/batch/", views.MemoryBatchApi.as_view(), name="memories-batch"),
    path("memories/<uuid:memory_id>/", include(memory_routes)),
    path("recall/", views.RecallApi.as_view(), name="recall"),
    path("search/", views.MemorySearchApi.as_view(), name="search"),
    path("search/scored/", views.MemoryScoredSearchApi.as_view(), name="search-scored"),
    path("sessions/", views.SessionCreateApi.as_view(), name="sessions"),
    path("sessions/<uuid:session_id>/messages/", views.SessionMessageApi.as_view()),
    path("sessions/<uuid:session_id>/end/", views.SessionEndApi.as_view()),
    path("users/<str:user_id>/", include(user_routes)),
]
