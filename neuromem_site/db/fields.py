from django.db import models


class RealField(models.FloatField):
    """A 4-byte `real` column (Django's FloatField is `double precision`); the seeds' schema
    uses real for scores, importance and confidences."""

    def db_type(self, connection) -> str:
        return "real"
