from django.apps import AppConfig


class ReflectionConfig(AppConfig):
    name = "reflection"
    verbose_name = "Reflection and traits"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from memories import hooks, signals
        from reflection import hooks as reflection_hooks

        hooks.trait_belief_register(reflection_hooks.DecayedTraitBelief())
        hooks.embedding_column_dependent_register(
            "reflection.trait_view", reflection_hooks.TraitViewEmbedding()
        )
        for signal, receiver in (
            (signals.memories_forgotten, reflection_hooks.traits_after_forgotten),
            (signals.session_ended, reflection_hooks.cycle_after_session),
            (signals.user_data_exported, reflection_hooks.user_reflection_export),
            (signals.user_data_purged, reflection_hooks.user_reflection_purge),
        ):
            signal.connect(receiver, weak=False, dispatch_uid=f"reflection.{receiver.__name__}")
