"""AsyncNeuroMem: the same calls as coroutines, listings as async iterators, the same errors
and retries, against the live service."""

import asyncio

import pytest
from neuromem_client import AsyncNeuroMem, Conflict, NotFound, RateLimited, ValidationFailed

from neuromem_site.api.throttling import ApiClientRateThrottle
from tests.clients.conftest import FAST, USER, sentences


@pytest.fixture
def async_client(live_server, token):
    """make(**options): an AsyncNeuroMem, to make inside the coroutine that uses it."""

    def make(**options) -> AsyncNeuroMem:
        return AsyncNeuroMem(live_server.url, token, **{**FAST, **options})

    return make


def test_the_async_client_writes_lists_and_recalls(async_client, served):
    async def main() -> None:
        async with async_client() as nm:
            items = [{"user_id": USER, "content": t, "memory_type": "fact"} for t in sentences(30)]
            results = await nm.memories.add_many(items, batch_size=20)
            assert [r["index"] for r in results] == list(range(30)) and all(
                r["ok"] for r in results
            )
            served.clear()
            listed = [m["content"] async for m in nm.memories.list(USER, page_size=7)]
            assert sorted(listed) == sorted(t["content"] for t in items)
            assert len(served) == 5

            written = await nm.memories.add(USER, "I like green tea")
            memory = written["memory"]
            assert (await nm.memories.get(memory["id"]))["content"] == "I like green tea"
            changed = await nm.memories.update(memory["id"], version=1, importance=0.8)
            assert changed["version"] == 2
            with pytest.raises(Conflict) as raised:
                await nm.memories.update(memory["id"], version=1, importance=0.1)
            assert raised.value.current_version == 2
            recalled = await nm.recall(USER, "green tea")
            assert [hit["content"] for hit in recalled["merged"]] == ["I like green tea"]
            assert [h["content"] for h in await nm.search(USER, "green tea")] == [
                "I like green tea"
            ]
            assert (await nm.memories.history(memory["id"]))[0]["event"] == "ADD"
            assert (await nm.memories.delete(memory["id"]))["state"] == "deleted"
            with pytest.raises(NotFound):
                await nm.memories.get("00000000-0000-0000-0000-000000000000")
            with pytest.raises(ValidationFailed):
                await nm.memories.add(USER, "")

    asyncio.run(main())


def test_async_sessions_users_traits_soul_and_stats(async_client):
    async def main() -> None:
        async with async_client() as nm:
            session = await nm.sessions.open(USER)
            added = await nm.sessions.add_message(session["id"], "user", "I live in Berlin")
            assert added["memories"]
            assert (await nm.sessions.end(session["id"]))["ended_at"]
            assert [e async for e in nm.users.entities(USER)]
            assert (await nm.users.export(USER))["sessions"][0]["id"] == session["id"]
            assert set(await nm.traits.list(USER)) == {"core", "preference", "behavior", "other"}
            assert "Berlin" in (await nm.traits.prompt_context(USER))["markdown"]
            assert (await nm.stats(USER, cache_ttl_ms=0))["counts"]["total"] >= 1
            assert (await nm.soul.bootstrap("# SOUL\n\n- Be kind.\n"))["version"] == 0
            assert [v["version"] async for v in nm.soul.versions()] == [0]
            assert (await nm.users.purge(USER))["deleted"]["memories"] >= 1
            assert (await nm.whoami())["name"] == "cl"

    asyncio.run(main())


def test_async_reads_are_retried_writes_are_not(async_client, monkeypatch, served):
    monkeypatch.setattr(ApiClientRateThrottle, "THROTTLE_RATES", {"api_client": "1/min"})
    # 59.5 s into a fixed minute: Retry-After 1 (a second's wait) on each refusal.
    monkeypatch.setattr(ApiClientRateThrottle, "timer", lambda self: 60 * 29_000_000 + 59.5)

    async def main() -> None:
        async with async_client(max_retries=1) as nm:
            await nm.whoami()
            served.clear()
            with pytest.raises(RateLimited):
                await nm.whoami()
            assert len(served) == 2
            served.clear()
            with pytest.raises(RateLimited) as raised:
                await nm.memories.add(USER, "I like tea")
            assert len(served) == 1 and raised.value.retry_after == 1.0

    asyncio.run(main())
