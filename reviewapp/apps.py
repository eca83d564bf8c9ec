from django.apps import AppConfig


class ReviewappConfig(AppConfig):
    name = "reviewapp"
    verbose_name = "Answer review"

    def ready(self) -> None:
        from reviewapp.core import audit

        audit.register_models()
