from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "neuromem_site.api"
    label = "api"
    verbose_name = "API"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from neuromem_site.api import schema  # noqa: F401  registers the OpenAPI auth scheme
