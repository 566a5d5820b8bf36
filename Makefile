# NeuroMem: `make run` runs the service, `make test` passes the tests. Both set themselves up.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEVSTACK := $(BIN)/python -m neuromem_site.devstack

.PHONY: install run test lint superuser api-client mcp manage schema bench-ingest bench-recall bench-http-layers bench-gc bench-load bench-quality bench-locomo bench-privacy bench-reflection bench-score bench-admin fuzz

$(STAMP): pyproject.toml scripts/build-pgvector.sh clients/python/pyproject.toml
	$(PYTHON) -m venv --upgrade-deps $(VENV)
	$(BIN)/pip install --quiet -e ".[dev,embedded]"
	$(BIN)/pip install --quiet -e "./clients/python[langgraph]"
	scripts/build-pgvector.sh $(BIN)/python
	touch $(STAMP)

install: $(STAMP)

## Web (gunicorn) + Celery worker + Celery beat, on the embedded PostgreSQL/Redis unless
## DATABASE_URL / REDIS_URL are set. WEB_HOST / WEB_PORT choose the address.
run: $(STAMP)
	$(DEVSTACK) run

## The whole suite, on a throw-away embedded PostgreSQL + Redis (or DATABASE_URL / REDIS_URL).
## The browser tests (tests/browser) run in Debian's Chromium, /usr/bin/chromium or
## NEUROMEM_CHROMIUM; without it they are skipped, and this says so.
test: $(STAMP)
	@chromium="$${NEUROMEM_CHROMIUM:-/usr/bin/chromium}"; command -v "$$chromium" >/dev/null || \
		echo "make test: no Chromium at $$chromium: the browser tests are skipped (apt-get install chromium)"
	$(DEVSTACK) exec --temporary -- $(BIN)/python -m pytest $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

## The first admin login (works beside a running `make run`, or on its own). Asks on the
## terminal; without one (a script, CI) it needs DJANGO_SUPERUSER_USERNAME, _EMAIL and _PASSWORD
## and runs `createsuperuser --noinput` (Django itself would exit 0 having created nobody).
superuser: $(STAMP)
	@if [ -n "$$DJANGO_SUPERUSER_USERNAME" ]; then \
		test -n "$$DJANGO_SUPERUSER_PASSWORD" || { echo "make superuser: DJANGO_SUPERUSER_USERNAME is set but DJANGO_SUPERUSER_PASSWORD is not" >&2; exit 2; }; \
		$(DEVSTACK) exec -- $(BIN)/python manage.py createsuperuser --noinput; \
	elif [ -t 0 ]; then \
		$(DEVSTACK) exec -- $(BIN)/python manage.py createsuperuser; \
	else \
		echo "make superuser: no terminal to ask on. Set DJANGO_SUPERUSER_USERNAME," \
			"DJANGO_SUPERUSER_EMAIL and DJANGO_SUPERUSER_PASSWORD to create one without prompts." >&2; \
		exit 2; \
	fi

## An API token: make api-client NAME=my-agent [PREFIX=agent1:] [STAFF=1]
api-client: $(STAMP)
	@test -n "$(NAME)" || (echo "usage: make api-client NAME=my-agent [PREFIX=p] [STAFF=1]" && exit 2)
	$(DEVSTACK) exec -- $(BIN)/python manage.py create_api_client "$(NAME)" \
		$(if $(PREFIX),--user-prefix "$(PREFIX)") $(if $(STAFF),--staff)

## The MCP server over stdio, as the API client whose token is in NEUROMEM_API_TOKEN
## (docs/mcp.md). Silent itself: stdout carries the protocol.
mcp: $(STAMP)
	@$(DEVSTACK) exec -- $(BIN)/python manage.py mcp_server

## Any manage.py command with the services up: make manage ARGS="showmigrations"
manage: $(STAMP)
	$(DEVSTACK) exec -- $(BIN)/python manage.py $(ARGS)

## Benchmarks (bench/), on throw-away embedded services; results go to docs/benchmarks.md
bench-ingest: $(STAMP)
	$(DEVSTACK) exec --temporary -- $(BIN)/python bench/ingest.py $(ARGS)

bench-recall: $(STAMP)
	$(DEVSTACK) exec --temporary -- $(BIN)/python bench/recall.py $(ARGS)

## Where a recall's time goes between the service and the HTTP answer, layer by layer, with
## a profile (bench/http_layers.py): make bench-http-layers [ARGS="--requests 1000"]
bench-http-layers: $(STAMP)
	$(DEVSTACK) exec --temporary -- $(BIN)/python bench/http_layers.py $(ARGS)

## Full garbage collections in a gunicorn worker serving recalls, with and without the hooks
## that freeze its objects (bench/gc_pauses.py): make bench-gc [ARGS="--rounds 3"]
bench-gc: $(STAMP)
	$(DEVSTACK) exec --temporary -- $(BIN)/python bench/gc_pauses.py $(ARGS)

## Concurrent clients on a mixed workload (20% writes, 60% recall, 20% reads) at 100,000
## memories, 8 / 32 / 64 clients (bench/load.py): make bench-load [ARGS="--web-threads 4"]
bench-load: $(STAMP)
	$(DEVSTACK) exec --temporary -- $(BIN)/python bench/load.py $(ARGS)

## A reflection cycle over 5,000 new memories; decay, refresh and expiry over 100,000 traits
bench-reflection: $(STAMP)
	$(DEVSTACK) exec --temporary -- $(BIN)/python bench/reflection.py $(ARGS)

## The activity score job over 1,000,000 memories: throughput and a second, idle run
bench-score: $(STAMP)
	$(DEVSTACK) exec --temporary -- $(BIN)/python bench/score.py $(ARGS)

## Server time of every admin page at 1,000,000 memories, against the same pages at 10,000
## (bench/admin.py): make bench-admin [ARGS="--memories 20000"]
bench-admin: $(STAMP)
	$(DEVSTACK) exec --temporary -- $(BIN)/python bench/admin.py $(ARGS)

## Memory quality against BM25 and dense-only baselines, current values, look-alike subjects
## and empty answers, and the benchd-harness reliability items (bench/quality.py); one run =
## one provider: EMBEDDING_PROVIDER=use make bench-quality [ARGS="--limit 300 --json out.json"]
## A part only: make bench-quality ARGS="--only reliability" (cri, own, reliability)
bench-quality: $(STAMP)
	$(DEVSTACK) exec --temporary -- $(BIN)/python bench/quality.py $(ARGS)

## Recall on LoCoMo's long conversations against BM25 and dense-only baselines, written as raw
## turns and through the sessions API (bench/locomo.py); one run = one provider:
## make bench-locomo ARGS="--locomo DIR [--ways turns,sessions] [--json out.json]"
bench-locomo: $(STAMP)
	$(DEVSTACK) exec --temporary -- $(BIN)/python bench/locomo.py $(ARGS)

## Forget requests honoured on every read, secrets never stored, ordinary text left alone
## (bench/privacy.py): make bench-privacy [ARGS="--cases other.yaml --locomo DIR --json out.json"]
bench-privacy: $(STAMP)
	$(DEVSTACK) exec --temporary -- $(BIN)/python bench/privacy.py $(ARGS)

## schemathesis, every check, over the whole OpenAPI schema as a staff and a prefixed client
## (over 30,000 cases, ~13 min), on throw-away embedded services (scripts/fuzz.py;
## docs/security.md): make fuzz [ARGS="--max-time 60"]
fuzz: $(STAMP)
	$(DEVSTACK) exec --temporary -- $(BIN)/python scripts/fuzz.py $(ARGS)

## Write the OpenAPI schema to docs/openapi.yaml
schema: $(STAMP)
	SECRET_KEY=schema-only $(BIN)/python manage.py spectacular --validate --fail-on-warn \
		--file docs/openapi.yaml
