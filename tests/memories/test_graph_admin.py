"""The admin's memory graph pages: the entities list (user, kind, name, role, current edges;
exact user search, kind filter), an entity's page with its edges over time and the memories
behind each, the edges list; all read-only for staff."""

from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from memories.graph.models import EntityKind, GraphEdge, GraphNode
from memories.models import Memory

pytestmark = pytest.mark.django_db

ENTITIES = "/admin/memories/graphnode/"
EDGES = "/admin/memories/graphedge/"
T1 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
T2 = datetime(2025, 6, 1, 9, 0, tzinfo=UTC)


def html_of(response) -> str:
    assert response.status_code == 200, response.status_code
    return response.content.decode()


@pytest.fixture
def graph() -> dict:
    """u:1 moved from Austin to Denver; their brother Mark. u:2 has a dog, Rex."""
    austin = Memory.objects.create(user_id="u:1", memory_type="fact", content="Lives in Austin")
    denver = Memory.objects.create(user_id="u:1", memory_type="fact", content="Lives in Denver")
    me = GraphNode.objects.create(user_id="u:1", kind=EntityKind.USER, created_at=T1)
    mark = GraphNode.objects.create(
        user_id="u:1", kind=EntityKind.PERSON, name="Mark", role="brother", aliases=["Marky"]
    )
    common = {"user_id": "u:1", "subject": me, "single": True}
    old = GraphEdge.objects.create(
        **common,
        relation="lives in",
        object_value="Austin",
        valid_at=T1,
        created_at=T1,
        memory_ids=[austin.id],
    )
    GraphEdge.objects.filter(pk=old.pk).update(invalid_at=T2, expired_at=T2)
    new = GraphEdge.objects.create(
        **common,
        relation="lives in",
        object_value="Denver",
        valid_at=T2,
        created_at=T2,
        memory_ids=[denver.id],
    )
    sibling = GraphEdge.objects.create(
        user_id="u:1",
        subject=me,
        relation="brother",
        object_node=mark,
        single=False,
        valid_at=T1,
        created_at=T1,
    )
    rex = GraphNode.objects.create(user_id="u:2", kind=EntityKind.PET, name="Rex", role="dog")
    return {
        "me": me,
        "mark": mark,
        "rex": rex,
        "austin": austin,
        "denver": denver,
        "old": old,
        "new": new,
        "sibling": sibling,
    }


@pytest.fixture
def viewer(client, django_user_model):
    """A staff member who may only view the graph."""
    user = django_user_model.objects.create_user("viewer", "viewer@example.com", "pw")
    user.is_staff = True
    user.save()
    user.user_permissions.add(
        *Permission.objects.filter(codename__in=["view_graphnode", "view_graphedge"])
    )
    client.force_login(user)
    return client


def test_the_entity_list_shows_user_kind_name_role_and_current_edges(admin_client, graph):
    html = html_of(admin_client.get(ENTITIES))
    for shown in ("the user", "Mark (the user&#x27;s brother)", "Rex (the user&#x27;s dog)"):
        assert shown in html
    assert "u:1" in html and "u:2" in html
    # The user: Denver and the brother are current (Austin ended); Mark: the brother edge.
    assert 'class="field-current_edges">2<' in html
    assert html.count('class="field-current_edges">1<') == 1
    assert 'class="field-current_edges">0<' in html  # Rex
    assert f"{ENTITIES}add/" not in html and "delete_selected" not in html
    assert 'name="user_id"' in html  # typed in, not a list of users


@pytest.mark.parametrize(
    ("query", "found", "missing"),
    [
        ({"q": "u:2"}, ["Rex"], ["Mark"]),
        ({"q": "u:"}, [], ["Mark", "Rex"]),  # exact, never a prefix
        ({"user_id": "u:1"}, ["Mark"], ["Rex"]),
        ({"kind__exact": "pet"}, ["Rex"], ["Mark"]),
        ({"kind__exact": "person", "user_id": "u:1"}, ["Mark"], ["Rex"]),
    ],
)
def test_the_entity_list_searches_exact_user_ids_and_filters_by_kind(
    admin_client, graph, query, found, missing
):
    html = html_of(admin_client.get(ENTITIES, query))
    for name in found:
        assert f"{name} (the user" in html, query
    for name in missing:
        assert f"{name} (the user" not in html, query


def test_search_by_an_entitys_id(admin_client, graph):
    html = html_of(admin_client.get(ENTITIES, {"q": str(graph["mark"].id)}))
    assert "Mark (the user" in html and "Rex (the user" not in html


def test_an_entitys_page_shows_its_edges_over_time_with_their_memories(admin_client, graph):
    html = html_of(
        admin_client.get(reverse("admin:memories_graphnode_change", args=[graph["me"].pk]))
    )
    austin_row = html.index("Austin")
    assert austin_row < html.index("Denver")  # oldest first
    for shown in ("lives in", "2025-03-01 09:00:00", "2025-06-01 09:00:00", "current", "ended"):
        assert shown in html
    for memory in (graph["austin"], graph["denver"]):
        assert reverse("admin:memories_memory_change", args=[memory.pk]) in html
    assert "fact: Lives in Austin" in html
    # The brother edge links to Mark's page; edges link to their own.
    assert reverse("admin:memories_graphnode_change", args=[graph["mark"].pk]) in html
    assert reverse("admin:memories_graphedge_change", args=[graph["old"].pk]) in html
    assert 'name="_save"' not in html and "deletelink" not in html

    marks = html_of(
        admin_client.get(reverse("admin:memories_graphnode_change", args=[graph["mark"].pk]))
    )
    assert "Marky" in marks  # aliases
    assert "Edges to it" in marks and "brother" in marks
    assert reverse("admin:memories_graphnode_change", args=[graph["me"].pk]) in marks


def test_the_edge_list_and_page(admin_client, graph):
    html = html_of(admin_client.get(EDGES))
    assert "Austin" in html and "Denver" in html and "Mark (the user" in html
    current = html_of(admin_client.get(EDGES, {"current": "current"}))
    assert "Denver" in current and "Austin" not in current
    ended = html_of(admin_client.get(EDGES, {"current": "ended"}))
    assert "Austin" in ended and "Denver" not in ended
    # An entity's id finds its edges either way.
    of_mark = html_of(admin_client.get(EDGES, {"q": str(graph["mark"].id)}))
    assert "brother" in of_mark and "Austin" not in of_mark
    page = html_of(
        admin_client.get(reverse("admin:memories_graphedge_change", args=[graph["old"].pk]))
    )
    assert "Austin" in page and "fact: Lives in Austin" in page
    assert reverse("admin:memories_memory_change", args=[graph["austin"].pk]) in page


def test_history_pages_show_the_edges_over_time(admin_client, graph):
    """The graph is its own history: an entity's history page shows its edges over time, an
    edge's the values its relation had for its subject, this one among them."""
    entity = html_of(
        admin_client.get(reverse("admin:memories_graphnode_history", args=[graph["me"].pk]))
    )
    assert 'id="audit-trail"' in entity
    assert entity.index("Austin") < entity.index("Denver") and "brother" in entity
    assert "No staff action on this entity is recorded" in entity

    edge = html_of(
        admin_client.get(reverse("admin:memories_graphedge_history", args=[graph["new"].pk]))
    )
    assert "doesn’t have a change history" not in edge
    trail = edge[edge.index('id="audit-trail"') :]
    assert "the user → lives in, over time" in trail
    assert trail.index("Austin") < trail.index("Denver")  # the earlier value, then this one
    assert "Mark (the user" not in trail  # another relation


def test_staff_who_may_view_read_but_never_change(viewer, graph):
    me = graph["me"]
    assert viewer.get(ENTITIES).status_code == 200
    assert viewer.get(EDGES).status_code == 200
    page = reverse("admin:memories_graphnode_change", args=[me.pk])
    assert "Denver" in html_of(viewer.get(page))
    assert viewer.post(page, {"name": "Someone"}).status_code == 403
    assert viewer.get(f"{ENTITIES}add/").status_code == 403
    delete = reverse("admin:memories_graphnode_delete", args=[me.pk])
    assert viewer.post(delete, {"post": "yes"}).status_code == 403
    edge = reverse("admin:memories_graphedge_change", args=[graph["old"].pk])
    assert viewer.post(edge, {"object_value": "Dallas"}).status_code == 403
    assert GraphNode.objects.get(pk=me.pk).name == ""
    assert GraphEdge.objects.get(pk=graph["old"].pk).object_value == "Austin"
