"""The agents' migrations (evolution 0003 to 0006) forward on a database holding SOUL
versions, their events and a contract: all move to the first agent (the oldest API client's
default one), the per-agent rules hold after it, every agent's guardrail starts off, and every
client has its default agent."""

import psycopg
import pytest

from tests.memories.scratch import migrated, scratch_database

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

CLIENT_SQL = """
INSERT INTO api_clients (id, name, token_hash, token_hint, user_prefixes, is_staff, is_active,
                         created_at)
VALUES (gen_random_uuid(), %s, md5(%s), 'x', ARRAY['x:'], false, true, %s::timestamptz)
"""
VERSION_SQL = """
INSERT INTO soul_versions (version, content, status, created_by, eval_result, proposal)
VALUES (%s, %s, %s, %s, %s::jsonb, %s::jsonb)
"""
PASSED = '{"passed": true, "checks": []}'


def test_today_s_lineage_moves_to_the_first_agent():
    with scratch_database() as url:
        for app, last in (("api", "0002"), ("evolution", "0002")):
            migrated(url, app, last)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(CLIENT_SQL, ["later", "later", "2026-02-01"])
            conn.execute(CLIENT_SQL, ["first", "first", "2026-01-01"])
            conn.execute(VERSION_SQL, [0, "# S0", "active", "bootstrap", None, None])
            conn.execute(
                VERSION_SQL, [1, "# S1", "proposed", "agent", PASSED, '{"base_version": 0}']
            )
            conn.execute("UPDATE soul_versions SET status = 'superseded' WHERE version = 0")
            conn.execute("UPDATE soul_versions SET status = 'active' WHERE version = 1")
            conn.execute(
                "INSERT INTO safety_contracts (version, anchors, constraints, content_hash,"
                " created_by) VALUES (1, '[\"S\"]', '[]', 'h', 'ops')"
            )
        migrated(url)
        with psycopg.connect(url, autocommit=True) as conn:
            agents = conn.execute(
                "SELECT a.id, a.name, c.name, a.is_default FROM agents a"
                " LEFT JOIN api_clients c ON c.id = a.client_id"
            ).fetchall()
            # 0006: the later client, which never had an agent, has its default one now.
            assert [row[1:] for row in agents] == [
                ("first", "first", True),
                ("later", "later", True),
            ]
            agent_id = agents[0][0]
            versions = "SELECT agent_id, version, status FROM soul_versions ORDER BY version"
            assert conn.execute(versions).fetchall() == [
                (agent_id, 0, "superseded"),
                (agent_id, 1, "active"),
            ]
            events = conn.execute("SELECT DISTINCT agent_id FROM soul_events").fetchall()
            assert events == [(agent_id,)]
            contracts = "SELECT agent_id, version, source_hash FROM safety_contracts"
            assert conn.execute(contracts).fetchall() == [(agent_id, 1, "")]

            # Per agent now: another agent starts at version 0 with its own active version,
            # and the log names the agent.
            (other,) = conn.execute(
                "INSERT INTO agents (name, is_default) VALUES ('deployment', true) RETURNING id"
            ).fetchone()
            conn.execute(
                "INSERT INTO soul_versions (agent_id, version, content, status, created_by)"
                " VALUES (%s, 0, '# O', 'active', 'bootstrap')",
                [other],
            )
            logged = "SELECT count(*) FROM soul_events WHERE agent_id = %s AND version = 0"
            assert conn.execute(logged, [other]).fetchone() == (1,)
            with pytest.raises(psycopg.errors.UniqueViolation):
                conn.execute(
                    "INSERT INTO soul_versions (agent_id, version, content, status, created_by)"
                    " VALUES (%s, 1, '# O2', 'active', 'bootstrap')",
                    [other],
                )
            with pytest.raises(psycopg.errors.RaiseException):
                conn.execute("DELETE FROM soul_events WHERE agent_id = %s", [other])
            # evolution 0005, run by the same migrate: every agent's guard is off, and the
            # guardrail's events are append-only.
            guards = conn.execute("SELECT DISTINCT guard_enabled FROM agents").fetchall()
            assert guards == [(False,)]
            conn.execute(
                "INSERT INTO guard_events (agent_id, session, kind, action, risk_level,"
                " error_code, detail, actor) VALUES (%s, '', 'guardrail_warning', '', '',"
                " 'GUARD_ANCHOR_MISSING', '{}', 'a')",
                [other],
            )
            with pytest.raises(psycopg.errors.RaiseException):
                conn.execute("UPDATE guard_events SET kind = 'guardrail_blocked'")


def test_every_client_gets_its_default_agent_once():
    with scratch_database() as url:
        migrated(url, "evolution", "0005")
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(CLIENT_SQL, ["none", "none", "2026-01-01"])
            conn.execute(CLIENT_SQL, ["some", "some", "2026-01-02"])
            (some,) = conn.execute("SELECT id FROM api_clients WHERE name = 'some'").fetchone()
            conn.execute(
                "INSERT INTO agents (client_id, name, is_default) VALUES"
                " (%s, 'some', true), (%s, 'helper', false)",
                [some, some],
            )
        migrated(url, "evolution", "0006")
        migrated(url, "evolution", "0005")  # the reverse keeps the agents
        migrated(url, "evolution", "0006")  # and again: nothing doubled
        with psycopg.connect(url, autocommit=True) as conn:
            agents = conn.execute(
                "SELECT c.name, a.name, a.is_default FROM agents a"
                " JOIN api_clients c ON c.id = a.client_id ORDER BY c.name, a.id"
            ).fetchall()
    assert agents == [
        ("none", "none", True),
        ("some", "some", True),
        ("some", "helper", False),
    ]
