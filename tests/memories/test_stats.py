"""Memory statistics: GET /api/v1/memories/stats/ and seed 004's GET /api/memories/stats, on
memories with known scores."""

import csv
import io
import time
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

import memories.stats
from memories.models import Memory

pytestmark = pytest.mark.django_db

V1 = "/api/v1/memories/stats/"
SEED = "/api/memories/stats"
# A memory of each state, both ends of each state's scores, and the top of the scale.
SCORES = [0, 29.5, 30, 69.9, 70, 99.99, 100]
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def ms(instant: datetime) -> int:
    return (instant - EPOCH) // timedelta(milliseconds=1)


def memory(user_id: str, score: float, **fields) -> Memory:
    tag = uuid.uuid4().hex
    content = f"{user_id} {score} {tag}"
    return Memory.objects.create(
        user_id=user_id,
        memory_type="fact",
        content=content,
        content_hash=tag,
        score=score,
        **fields,
    )


@pytest.fixture(autouse=True)
def own_cache_namespace(monkeypatch):
    """Each test's cache entries apart: Redis outlives the test's rolled-back rows."""
    monkeypatch.setattr(memories.stats, "CACHE_NAMESPACE", f"memory-stats-test:{uuid.uuid4()}")


@pytest.fixture
def known():
    """a:1 holds one memory per score in SCORES and a deleted one; a:2 and b:1 one each."""
    for score in SCORES:
        memory("a:1", score)
    memory("a:1", 80, expired_at=timezone.now())
    memory("a:2", 50)
    memory("b:1", 90)


@pytest.fixture
def agent(make_client):
    return make_client("a", ["a:"])[0]


def data(response) -> dict:
    assert response.status_code == 200, response.content
    return response.json()["data"]


def bins(histogram: list[dict]) -> dict[str, int]:
    """The bins that hold something, as `from-to: count`."""
    return {f"{b['from']}-{b['to']}": b["count"] for b in histogram if b["count"]}


def test_counts_per_state_and_the_histogram(agent, known):
    stats = data(agent.get(V1, {"user_id": "a:1", "histogram_bin_size": 10}))
    assert stats["counts"] == {"total": 7, "active": 3, "cold": 2, "deprecated": 2, "deleted": 1}
    assert stats["histogram"]["bin_size"] == 10
    assert [(b["from"], b["to"]) for b in stats["histogram"]["bins"]] == [
        (start, start + 10) for start in range(0, 100, 10)
    ]
    # 100 is in the last bin with 99.99; the deleted memory (80) is in none.
    assert bins(stats["histogram"]["bins"]) == {
        "0-10": 1,
        "20-30": 1,
        "30-40": 1,
        "60-70": 1,
        "70-80": 1,
        "90-100": 2,
    }
    assert stats["cached"] is False
    assert stats["user_id"] == "a:1"
    assert stats["query_duration_ms"] >= 0


@pytest.mark.parametrize(
    ("bin_size", "expected_bins", "filled"),
    [
        (
            30,
            [(0, 30), (30, 60), (60, 90), (90, 100)],
            {"0-30": 2, "30-60": 1, "60-90": 2, "90-100": 2},
        ),
        (100, [(0, 100)], {"0-100": 7}),
        (50, [(0, 50), (50, 100)], {"0-50": 3, "50-100": 4}),
    ],
)
def test_bin_sizes(agent, known, bin_size, expected_bins, filled):
    stats = data(agent.get(V1, {"user_id": "a:1", "histogram_bin_size": bin_size}))
    assert [(b["from"], b["to"]) for b in stats["histogram"]["bins"]] == expected_bins
    assert bins(stats["histogram"]["bins"]) == filled


def test_one_point_bins_put_100_with_99(agent, known):
    histogram = data(agent.get(V1, {"user_id": "a:1", "histogram_bin_size": 1}))["histogram"]
    assert len(histogram["bins"]) == 100
    assert histogram["bins"][-1] == {"from": 99, "to": 100, "count": 2}
    assert sum(b["count"] for b in histogram["bins"]) == 7


def test_default_bin_size_is_the_setting(agent, known, settings):
    settings.STATS_HISTOGRAM_BIN_SIZE = 25
    stats = data(agent.get(V1, {"user_id": "a:1"}))
    assert stats["histogram"]["bin_size"] == 25
    assert len(stats["histogram"]["bins"]) == 4


def test_the_window_is_on_created_at_both_ends_included(agent):
    now = timezone.now().replace(microsecond=0)
    days = {n: now - timedelta(days=n) for n in (10, 5, 1)}
    for day in days.values():
        memory("a:1", 50, created_at=day)
    window = {"user_id": "a:1", "cache_ttl_ms": 0}
    counts = data(agent.get(V1, {**window, "from_timestamp": ms(days[5])}))["counts"]
    assert counts["total"] == 2
    counts = data(agent.get(V1, {**window, "to_timestamp": ms(days[5])}))["counts"]
    assert counts["total"] == 2
    same = {"from_timestamp": ms(days[5]), "to_timestamp": ms(days[5])}
    stats = data(agent.get(V1, {**window, **same}))
    assert stats["counts"]["total"] == 1
    assert (stats["from_timestamp"], stats["to_timestamp"]) == (ms(days[5]), ms(days[5]))
    seed = {"user_id": "a:1", "cacheTtlMs": 0, "fromTimestamp": ms(days[10])}
    # To a millisecond before the newest: the other two.
    stats = data(agent.get(SEED, {**seed, "toTimestamp": ms(days[1]) - 1}))
    assert stats["counts"]["total"] == 2


def test_from_after_to_is_a_validation_error(agent):
    later, earlier = 1_738_291_200_000, 1_735_689_600_000
    v1 = agent.get(V1, {"user_id": "a:1", "from_timestamp": later, "to_timestamp": earlier})
    seed = agent.get(SEED, {"user_id": "a:1", "fromTimestamp": later, "toTimestamp": earlier})
    for response, field in ((v1, "from_timestamp"), (seed, "fromTimestamp")):
        assert response.status_code == 400
        error = response.json()["error"]
        assert (error["code"], error["field"]) == ("VALIDATION_ERROR", field)


RANGE_ERRORS = [
    # (v1 name, seed name, value, minAllowed, maxAllowed)
    ("histogram_bin_size", "histogramBinSize", 0, 1, 100),
    ("histogram_bin_size", "histogramBinSize", 101, 1, 100),
    ("cache_ttl_ms", "cacheTtlMs", -1, 0, 86_400_000),
    ("cache_ttl_ms", "cacheTtlMs", 86_400_001, 0, 86_400_000),
    ("from_timestamp", "fromTimestamp", -1, 0, 253_402_300_799_999),
    ("to_timestamp", "toTimestamp", 253_402_300_800_000, 0, 253_402_300_799_999),
]


@pytest.mark.parametrize(("v1_name", "seed_name", "value", "low", "high"), RANGE_ERRORS)
def test_range_errors_in_the_seeds_shape(agent, v1_name, seed_name, value, low, high):
    for path, name in ((V1, v1_name), (SEED, seed_name)):
        response = agent.get(path, {"user_id": "a:1", name: value})
        assert response.status_code == 400
        error = response.json()["error"]
        above = value > high
        assert error == {
            "code": "VALIDATION_ERROR",
            "message": f"Parameter '{name}' exceeds maximum value of {high}"
            if above
            else f"Parameter '{name}' is below minimum value of {low}",
            "field": name,
            "minAllowed": low,
            "maxAllowed": high,
            "provided": value,
        }


@pytest.mark.parametrize(
    ("path", "query", "field"),
    [
        (V1, "histogram_bin_size=ten", "histogram_bin_size"),
        (V1, "histogram_bin_size=2.5", "histogram_bin_size"),
        (V1, "from_timestamp=2025-01-01", "from_timestamp"),
        (V1, "to_timestamp=" + "9" * 5000, "to_timestamp"),
        (V1, "export_format=xml", "export_format"),
        (V1, "cache_ttl_ms=", "cache_ttl_ms"),
        (V1, "bin_size=5", "bin_size"),
        (V1, "histogram_bin_size=5&histogram_bin_size=6", "histogram_bin_size"),
        (V1, "histogramBinSize=5", "histogramBinSize"),
        (SEED, "histogram_bin_size=5", "histogram_bin_size"),
        (SEED, "exportFormat=CSV", "exportFormat"),
        (SEED, "user_id=a%3A1%00", "user_id"),
    ],
)
def test_bad_parameters_name_the_field(agent, path, query, field):
    if "user_id" not in query:
        query += "&user_id=a:1"
    response = agent.get(f"{path}?{query}")
    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["code"], error["field"]) == ("VALIDATION_ERROR", field)


def test_csv_export(agent, known):
    for path, names in (
        (V1, ("histogram_bin_size", "export_format")),
        (SEED, ("histogramBinSize", "exportFormat")),
    ):
        response = agent.get(path, {"user_id": "a:1", names[0]: 50, names[1]: "csv"})
        assert response.status_code == 200
        assert response["Content-Type"] == "text/csv; charset=utf-8"
        assert response["X-Cache"] in ("HIT", "MISS")
        assert list(csv.reader(io.StringIO(response.content.decode()))) == [
            ["kind", "name", "score_from", "score_to", "count"],
            ["state", "total", "0", "100", "7"],
            ["state", "active", "70", "100", "3"],
            ["state", "cold", "30", "70", "2"],
            ["state", "deprecated", "0", "30", "2"],
            ["state", "deleted", "", "", "1"],
            ["bin", "0-50", "0", "50", "3"],
            ["bin", "50-100", "50", "100", "4"],
        ]


def test_both_is_the_json_with_the_csv_text(agent, known):
    params = {"user_id": "a:1", "histogram_bin_size": 50, "cache_ttl_ms": 0}
    alone = agent.get(V1, {**params, "export_format": "csv"}).content.decode()
    both = data(agent.get(V1, {**params, "export_format": "both"}))
    assert both["csv"] == alone
    assert both["counts"]["total"] == 7
    assert "csv" not in data(agent.get(V1, {**params, "export_format": "json"}))
    seed = data(
        agent.get(
            SEED,
            {"user_id": "a:1", "histogramBinSize": 50, "cacheTtlMs": 0, "exportFormat": "both"},
        )
    )
    assert seed["csv"] == alone


def test_the_seed_route_answers_in_camel_case(agent, known):
    before = ms(timezone.now())
    stats = data(agent.get(SEED, {"user_id": "a:1", "histogramBinSize": 50, "fromTimestamp": 0}))
    after = ms(timezone.now())
    assert set(stats) == {
        "generatedAt",
        "cached",
        "userId",
        "fromTimestamp",
        "toTimestamp",
        "counts",
        "histogram",
        "redactions",
        "queryDurationMs",
    }
    assert before <= stats["generatedAt"] <= after
    assert stats["counts"] == {"total": 7, "active": 3, "cold": 2, "deprecated": 2, "deleted": 1}
    assert stats["histogram"] == {
        "binSize": 50,
        "bins": [{"from": 0, "to": 50, "count": 3}, {"from": 50, "to": 100, "count": 4}],
    }
    assert (stats["userId"], stats["fromTimestamp"], stats["toTimestamp"]) == ("a:1", 0, None)


def test_a_client_counts_only_its_own_users(agent, known):
    for path in (V1, SEED):
        response = agent.get(path, {"user_id": "b:1"})
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "NOT_FOUND"
        response = agent.get(path)  # every end user: staff only
        assert response.status_code == 403
        assert response.json()["error"]["field"] == "user_id"


def test_staff_count_every_user_or_one(make_client, known):
    staff, _ = make_client("ops", staff=True)
    every = data(staff.get(V1, {"cache_ttl_ms": 0}))
    # a:1's 7 and its deleted one, a:2's and b:1's.
    assert every["counts"] == {"total": 9, "active": 4, "cold": 3, "deprecated": 2, "deleted": 1}
    assert every["user_id"] is None
    one = data(staff.get(SEED, {"user_id": "b:1", "cacheTtlMs": 0}))
    assert one["counts"] == {"total": 1, "active": 1, "cold": 0, "deprecated": 0, "deleted": 0}


def test_a_second_call_within_the_ttl_comes_from_the_cache(agent, known):
    params = {"user_id": "a:1", "cache_ttl_ms": 60_000}
    first = agent.get(V1, params)
    assert (data(first)["cached"], first["X-Cache"]) == (False, "MISS")
    memory("a:1", 75)
    second = agent.get(V1, params)
    assert (data(second)["cached"], second["X-Cache"]) == (True, "HIT")
    assert data(second)["counts"]["total"] == 7  # as computed the first time
    assert data(second)["generated_at"] == data(first)["generated_at"]
    # Other parameters are another entry.
    assert data(agent.get(V1, {**params, "histogram_bin_size": 20}))["cached"] is False
    # Older than the TTL asked for: computed afresh, and stored again.
    time.sleep(0.01)
    fresh = data(agent.get(V1, {**params, "cache_ttl_ms": 5}))
    assert (fresh["cached"], fresh["counts"]["total"]) == (False, 8)
    assert data(agent.get(V1, params))["counts"]["total"] == 8


def test_a_purge_outdates_every_cached_answer(
    agent, make_client, known, django_capture_on_commit_callbacks
):
    staff = make_client("ops", staff=True)[0]
    params = {"user_id": "a:1", "cache_ttl_ms": 60_000}
    every = {"cache_ttl_ms": 60_000}
    assert data(agent.get(V1, params))["counts"]["total"] == 7
    assert data(staff.get(V1, every))["counts"]["total"] == 9
    with django_capture_on_commit_callbacks(execute=True):
        assert agent.delete("/api/v1/users/a:1/").status_code == 200
    purged = data(agent.get(V1, params))
    assert (purged["cached"], purged["counts"]["total"]) == (False, 0)
    assert data(staff.get(V1, every))["counts"]["total"] == 2  # a:2's and b:1's
    # Answers made after the purge are cached again.
    assert data(agent.get(V1, params))["cached"] is True


def test_ttl_zero_neither_reads_nor_writes_the_cache(agent, known):
    params = {"user_id": "a:1", "cache_ttl_ms": 0}
    assert data(agent.get(V1, params))["cached"] is False
    assert data(agent.get(V1, params))["cached"] is False
    # Nothing was stored: a call that accepts a cached answer finds none.
    assert data(agent.get(V1, {**params, "cache_ttl_ms": 60_000}))["cached"] is False
    # The seed route shares the selector and its cache.
    assert data(agent.get(SEED, {"user_id": "a:1", "cacheTtlMs": 60_000}))["cached"] is True


def test_no_token_is_401(anon):
    for path in (V1, SEED):
        response = anon.get(path, {"user_id": "a:1"})
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "UNAUTHORIZED"
