from django.apps import AppConfig


class ReflectionConfig(AppConfig):
    name = "reflection"
    verbose_name = "Reflection and traits"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from memories.signals import memories_forgotten
        from reflection.services.traits import traits_after_forget

        memories_forgotten.connect(
            lambda sender, signal, **kwargs: traits_after_forget(**kwargs),
            weak=False,
            dispatch_uid="reflection.traits_after_forget",
        )
