"""Odd input answers a 4xx envelope naming the field and writes nothing; what the API accepts,
every read can answer (no NaN, no exp() underflow)."""

import json
import math

import pytest
from django.conf import settings
from django.db import connection

from memories.models import Memory

pytestmark = pytest.mark.django_db

USER = "t:u"
DIMS = settings.EMBEDDING_DIM


@pytest.fixture
def http(make_client):
    client, _ = make_client("t", ["t:"])
    return client


def write(http, **fields):
    body = {"user_id": USER, "content": "Tom keeps bees", "memory_type": "fact", **fields}
    return http.post("/api/v1/memories/", body, format="json")


def assert_rejected(response, field: str | None, status: int = 400) -> None:
    assert response.status_code == status, response.content
    body = response.json()
    assert body["ok"] is False
    if field is not None:
        assert body["error"]["field"] == field
    assert not Memory.objects.filter(user_id=USER, content__startswith="Tom").exists()


def raw_post(http, url: str, body: str):
    return http.generic("POST", url, body.encode("utf-8", "surrogatepass"), "application/json")


@pytest.mark.parametrize(
    "vector",
    [
        [0.0] * DIMS,  # no direction: every cosine with it is NaN
        [1e-300] * DIMS,  # rounds to zero as halfvec
        [1e300] + [0.1] * (DIMS - 1),
        [70000.0] + [0.1] * (DIMS - 1),  # beyond halfvec's range
        [0.1] * (DIMS - 1),
    ],
    ids=["zero", "rounds-to-zero", "1e300", "over-halfvec", "short"],
)
def test_unusable_embeddings_are_rejected(http, vector):
    assert_rejected(write(http, embedding=vector), "embedding")


def test_non_finite_numbers_are_rejected(http):
    body = '{"user_id": "t:u", "content": "Tom keeps bees", "memory_type": "fact", "embedding": %s}'
    assert_rejected(raw_post(http, "/api/v1/memories/", body % "[NaN]"), "embedding[0]")
    vector = json.dumps([0.1] * (DIMS - 1) + [1]).replace("1]", "1e400]")  # json reads inf
    assert_rejected(raw_post(http, "/api/v1/memories/", body % vector), f"embedding[{DIMS - 1}]")
    assert_rejected(write(http, importance="NaN"), "importance")
    metadata = body.replace('"embedding": %s', '"metadata": {"x": 1e400}')
    assert_rejected(raw_post(http, "/api/v1/memories/", metadata), "metadata")


def test_a_zero_vector_already_stored_neither_supersedes_nor_breaks_recall(http):
    """A row from before the check (or a provider's bad answer): reads stay finite."""
    unrelated = write(http, content="Tom's sister is Ann").json()["data"]["memory"]
    poisoned = write(http, content="Tom has a zero vector").json()["data"]["memory"]
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE memories SET embedding = %s::halfvec, embedding_status = 'ready' WHERE id = %s",
            [str([0.0] * DIMS), poisoned["id"]],
        )
        cursor.execute(
            "UPDATE memories SET embedding_status = 'ready' WHERE id = %s", [unrelated["id"]]
        )
    assert write(http, content="Tom likes jazz").json()["data"]["operation"] == "ADD"
    response = http.post("/api/v1/recall/", {"user_id": USER, "query": "Tom"}, format="json")
    assert response.status_code == 200, response.content
    hits = response.json()["data"]["merged"]
    assert hits and all(
        hit["similarity"] is None or math.isfinite(hit["similarity"]) for hit in hits
    )
    assert Memory.objects.get(pk=unrelated["id"]).expired_at is None


@pytest.mark.parametrize(
    "valid_at", ["1900-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z"]
)
def test_any_accepted_date_works_in_every_read(http, valid_at):
    assert write(http, valid_at=valid_at).status_code == 201
    for as_of in (None, "2100-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "9999-12-31T00:00:00Z"):
        extra = {"as_of": as_of} if as_of else {}
        recall = {"user_id": USER, "query": "Tom keeps bees", **extra}
        response = http.post("/api/v1/recall/", recall, format="json")
        assert response.status_code == 200, response.content
        listing = http.get("/api/v1/memories/", {"user_id": USER, **extra})
        assert listing.status_code == 200, listing.content
    for url in ("/api/v1/search/", "/api/v1/search/scored/"):
        assert http.get(url, {"user_id": USER, "q": "bees"}).status_code == 200
    assert http.get(f"/api/v1/users/{USER}/export/").status_code == 200


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ('{"metadata": {"a\\u0000b": 1}}', "metadata"),
        ('{"metadata": {"a": "b\\u0000"}}', "metadata"),
        ('{"metadata": {"a": ["\\ud800"]}}', "metadata"),
        ('{"content": "Tom \\u0000 keeps bees"}', "content"),
        ('{"content": "Tom \\udc00 keeps bees"}', "content"),
        ('{"key": "k\\u0000"}', "key"),
        ('{"key": "k\\ud800"}', "key"),
        ('{"metadata": null}', "metadata"),
        ('{"metadata": %s}' % ('{"a": ' * 40 + "1" + "}" * 40), "metadata"),
    ],
    ids=[
        "nul-metadata-key",
        "nul-value",
        "surrogate-value",
        "nul-content",
        "surrogate-content",
        "nul-key",
        "surrogate-key",
        "null",
        "deep",
    ],
)
def test_unstorable_text_and_shapes_are_rejected_by_field(http, body, field):
    base = {"user_id": USER, "content": "Tom keeps bees", "memory_type": "fact"}
    merged = json.dumps(base)[:-1] + ", " + body[1:]
    assert_rejected(raw_post(http, "/api/v1/memories/", merged), field)


def test_a_body_nested_beyond_the_parser_is_a_400(http):
    assert_rejected(raw_post(http, "/api/v1/memories/", "[" * 20_000 + "]" * 20_000), None)


@pytest.mark.parametrize("url", ["/api/v1/memories/", "/api/v1/recall/"])
@pytest.mark.parametrize("charset", ["rot13", "base64", "zlib"])
def test_a_charset_that_is_no_text_encoding_is_a_415(http, url, charset):
    body = json.dumps({"user_id": USER, "content": "Tom keeps bees", "query": "bees"})
    response = http.generic("POST", url, body, f"application/json; charset={charset}")
    assert_rejected(response, None, status=415)
    assert response.json()["error"]["code"] == "UNSUPPORTED_MEDIA_TYPE"


def test_one_bad_batch_item_fails_only_itself(http):
    items = [
        {"user_id": USER, "content": "Tom keeps bees", "memory_type": "fact"},
        {
            "user_id": USER,
            "content": "Tom has a NUL",
            "memory_type": "fact",
            "metadata": {"a": "\0"},
        },
        None,
        "not an object",
        {
            "user_id": USER,
            "content": "Tom cites nothing",
            "memory_type": "fact",
            "embedding": [0] * DIMS,
        },
    ]
    results = http.post("/api/v1/memories/batch/", {"items": items}, format="json")
    assert results.status_code == 200, results.content
    outcomes = results.json()["data"]["results"]
    assert [outcome["ok"] for outcome in outcomes] == [True, False, False, False, False]
    assert [outcome.get("error", {}).get("field") for outcome in outcomes[1:]] == [
        "metadata",
        None,
        None,
        "embedding",
    ]
    assert list(Memory.objects.filter(user_id=USER).values_list("content", flat=True)) == [
        "Tom keeps bees"
    ]


def test_the_documented_batch_fits_under_the_batch_routes_cap(http):
    """1,000 items of 10,000 characters: over the single-item routes' cap, within the batch's."""
    items = [
        {
            "user_id": USER,
            "content": f"{n} " + "x" * (settings.MEMORY_MAX_CHARS - 6),
            "memory_type": "document",
        }
        for n in range(settings.MEMORY_BATCH_MAX)
    ]
    response = http.post("/api/v1/memories/batch/", {"items": items}, format="json")
    assert response.status_code == 200, response.content[:300]
    assert all(result["ok"] for result in response.json()["data"]["results"])
    assert Memory.objects.filter(user_id=USER).count() == settings.MEMORY_BATCH_MAX


def test_a_body_over_the_routes_cap_is_413_before_it_is_read(http):
    body = json.dumps({"user_id": USER, "content": "x" * settings.API_BODY_MAX_BYTES})
    response = raw_post(http, "/api/v1/memories/", body)
    assert response.status_code == 413
    error = response.json()["error"]
    assert error["code"] == "PAYLOAD_TOO_LARGE"
    assert error["maxAllowed"] == settings.API_BODY_MAX_BYTES
    assert error["provided"] == len(body)


@pytest.mark.parametrize("value", [1e-300, 1e-40, 5e-324])
def test_tiny_floats_are_stored_as_postgres_real_holds_them(http, value):
    response = write(http, importance=value)
    assert response.status_code == 201, response.content
    assert 0 <= response.json()["data"]["memory"]["importance"] < 1e-37
    listing = http.get("/api/v1/memories/", {"user_id": USER, "score_min": value})
    assert listing.status_code == 200, listing.content


def test_a_tiny_trait_confidence_in_metadata_is_stored(http):
    response = write(http, memory_type="trait", metadata={"confidence": 1e-300})
    assert response.status_code == 201, response.content
    assert response.json()["data"]["memory"]["trait"]["confidence"] == 0


@pytest.mark.parametrize(
    "user_id", ["t:a/b", "t:\u0007", " t:x", "t:x ", "t:x\u009by", "t:x\u0085", "\u0080t:x"]
)
def test_user_ids_that_a_route_could_not_name_are_rejected_at_write(http, user_id):
    assert_rejected(write(http, user_id=user_id), "user_id")


@pytest.mark.parametrize("path", ["/api/v1/users/t:%00x/export/", "/api/v1/users/t:%00x/"])
def test_a_nul_in_a_user_id_path_is_a_validation_error(http, path):
    response = http.get(path) if path.endswith("export/") else http.delete(path)
    assert_rejected(response, "user_id")


@pytest.mark.parametrize("url", ["/api/v1/memories/", "/api/v1/memories/batch/"])
def test_a_lying_content_length_over_the_cap_is_413(http, url):
    response = http.generic(
        "POST", url, b'{"items": []}', "application/json", CONTENT_LENGTH=str(10**12)
    )
    assert response.status_code == 413
    assert response.json()["error"]["provided"] == 10**12


@pytest.mark.parametrize(
    ("url", "body", "field"),
    [
        ("/api/v1/memories/", {"content": 0, "memory_type": "fact"}, "content"),
        ("/api/v1/memories/", {"content": "x", "memory_type": "fact", "key": 0}, "key"),
        ("/api/v1/recall/", {"query": "bees", "include_traits": 0}, "include_traits"),
        ("/api/v1/recall/", {"query": 7}, "query"),
        ("/api/v1/recall/", {"query": "bees", "limit": "5"}, "limit"),
        ("/api/v1/recall/", {"query": "bees", "limit": 5.0}, "limit"),
        (
            "/api/v1/memories/",
            {"content": "x", "memory_type": "fact", "importance": False},
            "importance",
        ),
        (
            "/api/v1/memories/",
            {"content": "x", "memory_type": "fact", "embedding": [True] * DIMS},
            "embedding",
        ),
    ],
)
def test_json_strings_and_booleans_must_be_sent_as_such(http, url, body, field):
    assert_rejected(http.post(url, {"user_id": USER, **body}, format="json"), field)


@pytest.mark.parametrize(
    ("url", "field"),
    [
        ("/api/v1/memories/?user_id=", "user_id"),
        (f"/api/v1/memories/?user_id={USER}&as_of=", "as_of"),
        (f"/api/v1/search/?user_id={USER}&q=bees&memory_type=", "memory_type"),
    ],
)
def test_an_empty_query_parameter_is_an_error_not_an_absent_one(make_client, url, field):
    staff, _ = make_client("ops", staff=True)  # for staff, `user_id=` would list everyone
    assert_rejected(staff.get(url), field)


def test_sorting_by_valid_at_pages_through_rows_without_one(http):
    for n in range(3):
        write(http, content=f"Tom fact {n}")
    Memory.objects.filter(content="Tom fact 1").update(valid_at=None)  # as V1 rows may be
    seen, cursor = [], None
    while True:
        params = {"user_id": USER, "sort_by": "valid_at", "limit": 1}
        page = http.get("/api/v1/memories/", params | ({"cursor": cursor} if cursor else {}))
        assert page.status_code == 200, page.content
        seen += [memory["content"] for memory in page.json()["data"]]
        if not (cursor := page.json()["page"]["next"]):
            break
    assert sorted(seen) == ["Tom fact 0", "Tom fact 1", "Tom fact 2"]


def test_a_user_id_stored_before_the_rules_can_still_be_read_and_purged(make_client):
    """Lookups take any id PostgreSQL holds (say, from the V1 upgrade); only writes refuse."""
    staff, _ = make_client("ops", staff=True)
    legacy = "t:legacy "
    Memory.objects.create(user_id=legacy, memory_type="fact", content="old", content_hash="x")
    listing = staff.get("/api/v1/memories/", {"user_id": legacy})
    assert [memory["content"] for memory in listing.json()["data"]] == ["old"]
    export = staff.get("/api/v1/users/t:legacy%20/export/")
    assert [memory["content"] for memory in export.json()["data"]["memories"]] == ["old"]
    purge = staff.delete("/api/v1/users/t:legacy%20/")
    assert purge.json()["data"]["deleted"]["memories"] == 1
    assert_rejected(write(staff, user_id=legacy), "user_id")


def test_routes_outside_the_api_keep_djangos_form_cap(anon):
    """Only the API's routes take big bodies; the admin's login refuses one unread."""
    response = anon.generic(
        "POST",
        "/admin/login/",
        b"username=x",
        "application/x-www-form-urlencoded",
        CONTENT_LENGTH=str(settings.FORM_BODY_MAX_BYTES + 1),
    )
    assert response.status_code == 413


@pytest.mark.parametrize(
    ("url", "body", "field"),
    [
        ("/api/v1/recall/", '{"user_id": "t:u", "query": "tea", "fields": "\\ud800"}', "fields"),
        (
            "/api/v1/memories/",
            '{"user_id": "t:u", "content": "x", "memory_type": "\\udc00"}',
            "memory_type",
        ),
    ],
    ids=["recall-fields", "memory-type"],
)
def test_an_error_echoing_a_lone_surrogate_still_answers(http, url, body, field):
    """A choice that is none of the choices is echoed in the error's message: a lone surrogate
    in it is answered as U+FFFD (UTF-8 cannot carry it), not as a 500."""
    response = raw_post(http, url, body)
    assert_rejected(response, field)
    assert "\ufffd" in response.json()["error"]["message"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"session_id": 5}, "session_id"),
        ({"source_episode_ids": [True]}, "source_episode_ids[0]"),
    ],
    ids=["number", "boolean-in-list"],
)
def test_an_id_must_be_sent_as_text(http, body, field):
    """DRF's UUIDField reads 5 as ...0005 and true as ...0001: an id is refused unless it is a
    string, as the schema says, instead of looking up another id."""
    response = write(http, **body)
    assert_rejected(response, field)
    assert "UUID" in response.json()["error"]["message"]


TRAIT = {"trait_stage": "established", "trait_subtype": "behavior", "confidence": 0.9}


@pytest.mark.parametrize(
    ("metadata", "field"),
    [
        ('{"first_observed": "0001-01-01T00:00:00+14:00"}', "metadata.first_observed"),
        ('{"last_reinforced": "9999-12-31T23:59:59-23:59"}', "metadata.last_reinforced"),
        ('{"confidence": 1%s}' % ("0" * 400), "metadata.confidence"),
        ('{"confidence": 7}', "metadata.confidence"),
        ('{"confidence": -0.5}', "metadata.confidence"),
        ('{"reinforcement_count": -10}', "metadata.reinforcement_count"),
        ('{"contradiction_count": -1}', "metadata.contradiction_count"),
        ('{"reinforcement_count": 2.5}', "metadata.reinforcement_count"),
    ],
    ids=[
        "before-year-1-in-utc",
        "after-year-9999-in-utc",
        "integer-beyond-float",
        "confidence-above-1",
        "confidence-below-0",
        "negative-reinforcements",
        "negative-contradictions",
        "count-not-whole",
    ],
)
def test_a_trait_s_metadata_out_of_range_is_refused(http, metadata, field):
    """A trait's time stored in UTC must be one a read can turn back into a datetime, its
    confidence a share, its counts never negative (the decay divides by 1 + a multiple of the
    reinforcements): else the row would be written and every read of it fail, and the refresh
    of every user's believed traits with it."""
    body = '{"user_id": "t:u", "content": "Tom runs", "memory_type": "trait", "metadata": %s}'
    response = raw_post(http, "/api/v1/memories/", body % metadata)
    assert response.status_code == 400, response.content
    assert response.json()["error"]["field"] == field
    assert not Memory.objects.filter(user_id=USER).exists()


@pytest.mark.parametrize(
    ("metadata", "as_of"),
    [
        ({**TRAIT, "last_reinforced": "1000-01-01T00:00:00Z"}, None),
        (TRAIT, "3000-01-01T00:00:00Z"),
        ({"emotion": {"arousal": 5e-324}}, None),
    ],
    ids=["reinforced-in-1000", "asked-as-of-3000", "tiniest-arousal"],
)
def test_recall_answers_over_extreme_values_stored(http, metadata, as_of):
    """A decay or a recency over centuries, an arousal at float's edge: each bounded in SQL,
    where exp() and products underflow as errors."""
    memory_type = "trait" if "trait_stage" in metadata else "fact"
    written = write(http, content="Tom runs every day", memory_type=memory_type, metadata=metadata)
    assert written.status_code == 201, written.content
    query = {"user_id": USER, "query": "Tom runs", **({"as_of": as_of} if as_of else {})}
    response = http.post("/api/v1/recall/", query, format="json")
    assert response.status_code == 200, response.content
    assert http.get("/api/v1/search/", {"user_id": USER, "q": "runs"}).status_code == 200


def test_recall_answers_over_an_arousal_beyond_float(http):
    body = (
        '{"user_id": "t:u", "content": "Tom runs every day", "memory_type": "fact",'
        ' "metadata": {"emotion": {"arousal": 1%s}}}' % ("0" * 400)
    )
    assert raw_post(http, "/api/v1/memories/", body).status_code == 201
    response = http.post("/api/v1/recall/", {"user_id": USER, "query": "Tom runs"}, format="json")
    assert response.status_code == 200, response.content
