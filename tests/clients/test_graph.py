"""A small LangGraph graph on NeuroMemStore that remembers across threads: what the user says
in one conversation (thread) is recalled in another, for that user only."""

import asyncio
import uuid
from dataclasses import dataclass
from typing import TypedDict

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime
from neuromem_client.langgraph import NeuroMemStore

from tests.clients.conftest import FAST


class State(TypedDict):
    message: str
    answer: str


@dataclass
class Context:
    user_id: str


def reply(state: State, runtime: Runtime[Context]) -> dict:
    """Keep what follows "Remember:", else answer with the best memory recalled."""
    namespace = (runtime.context.user_id, "memories")
    message = state["message"]
    if message.startswith("Remember: "):
        runtime.store.put(
            namespace, str(uuid.uuid4()), {"text": message.removeprefix("Remember: ")}
        )
        return {"answer": "Noted."}
    found = runtime.store.search(namespace, query=message, limit=1)
    return {"answer": found[0].value["text"] if found else "I don't know."}


async def areply(state: State, runtime: Runtime[Context]) -> dict:
    namespace = (runtime.context.user_id, "memories")
    found = await runtime.store.asearch(namespace, query=state["message"], limit=1)
    return {"answer": found[0].value["text"] if found else "I don't know."}


def graph(node, store: NeuroMemStore):
    builder = StateGraph(State, context_schema=Context)
    builder.add_node("reply", node)
    builder.add_edge(START, "reply")
    return builder.compile(checkpointer=InMemorySaver(), store=store)


def ask(app, thread: str, user_id: str, message: str) -> str:
    config = {"configurable": {"thread_id": thread}}
    return app.invoke({"message": message}, config, context=Context(user_id))["answer"]


def test_a_graph_remembers_across_threads(live_server, token):
    store = NeuroMemStore(base_url=live_server.url, token=token, **FAST)
    app = graph(reply, store)
    assert ask(app, "monday", "cl:alice", "Remember: I like green tea") == "Noted."
    assert ask(app, "friday", "cl:alice", "Which tea do I like?") == "I like green tea"
    assert ask(app, "friday", "cl:bob", "Which tea do I like?") == "I don't know."

    async def later() -> str:
        async_app = graph(areply, store)
        config = {"configurable": {"thread_id": "sunday"}}
        state = await async_app.ainvoke(
            {"message": "Which tea do I like?"}, config, context=Context("cl:alice")
        )
        await store.aclose()
        return state["answer"]

    assert asyncio.run(later()) == "I like green tea"
    store.close()
