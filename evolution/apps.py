from django.apps import AppConfig


class EvolutionConfig(AppConfig):
    name = "evolution"
    verbose_name = "SOUL evolution"
    default_auto_field = "django.db.models.BigAutoField"
