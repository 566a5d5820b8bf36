from django.apps import AppConfig


class ReflectionConfig(AppConfig):
    name = "reflection"
    verbose_name = "Reflection and traits"
    default_auto_field = "django.db.models.BigAutoField"
