import os

# One BLAS thread per process, set before NumPy loads: the web and worker processes already run
# one per core, and OpenBLAS's own threads beside them slowed recall when the query is embedded
# in the request (docs/benchmarks.md, "Recall", "With the semantic default"). A deployment may
# still set its own.
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

from neuromem_site.celery import app as celery_app  # noqa: E402

__all__ = ["celery_app"]
