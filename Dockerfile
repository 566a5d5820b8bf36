# Production image: gunicorn (web), celery worker and celery beat all run from it.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    STATIC_ROOT=/app/staticfiles \
    PROMETHEUS_MULTIPROC_DIR=/var/lib/neuromem/metrics

WORKDIR /app
RUN useradd --create-home --uid 1000 neuromem \
    && mkdir -p /var/lib/neuromem/metrics && chown neuromem /var/lib/neuromem/metrics

COPY pyproject.toml README.md manage.py ./
COPY core ./core
COPY neuromem_site ./neuromem_site
COPY memories ./memories
COPY reflection ./reflection
COPY evolution ./evolution
COPY templates ./templates
# Editable, so BASE_DIR (templates/, manage.py) stays /app. No `embedded` extra: production
# talks to the PostgreSQL and Redis named by DATABASE_URL and REDIS_URL.
RUN pip install -e . \
    && SECRET_KEY=collectstatic-only python manage.py collectstatic --noinput --verbosity 0

USER neuromem
EXPOSE 8000
# neuromem_site/gunicorn_conf.py: workers (WEB_CONCURRENCY), timeouts, JSON error pages.
ENV WEB_CONCURRENCY=3
CMD ["gunicorn", "--config", "python:neuromem_site.gunicorn_conf", "--bind", "0.0.0.0:8000", "neuromem_site.wsgi:application"]
