from django.db import models
from django.db.models import lookups


class RealField(models.FloatField):
    """A 4-byte `real` column (Django's FloatField is `double precision`): scores,
    importance and confidences need no more, and four bytes less per row adds up."""

    def db_type(self, connection) -> str:
        return "real"


class RealComparison:
    """Compare a real column with a real: as a double, 0.1 is not the stored 0.1
    (0.100000001…), which breaks equality filters and cursor positions."""

    def process_rhs(self, compiler, connection):
        sql, params = super().process_rhs(compiler, connection)
        return f"({sql})::real", params


for lookup in (
    lookups.Exact,
    lookups.GreaterThan,
    lookups.GreaterThanOrEqual,
    lookups.LessThan,
    lookups.LessThanOrEqual,
):
    RealField.register_lookup(type(lookup.__name__, (RealComparison, lookup), {}))
