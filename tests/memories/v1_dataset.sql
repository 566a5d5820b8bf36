-- A V1 NeuroMem database: the `embeddings` table (vector column, legacy memory types, trait
-- fields inside metadata) as an old SDK's partial db.init() left it (content_hash and
-- trait_subtype already added), plus the V1 conversation tables.
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE embeddings (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id varchar(255) NOT NULL,
    content text NOT NULL,
    embedding vector(1024),
    memory_type varchar(50) NOT NULL DEFAULT 'general',
    metadata jsonb,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz,
    valid_from timestamptz,
    valid_until timestamptz,
    version integer NOT NULL DEFAULT 1,
    superseded_by uuid,
    extracted_timestamp timestamptz,
    access_count integer DEFAULT 0,
    last_accessed_at timestamptz,
    content_hash varchar(32),
    trait_subtype varchar(20)
);

CREATE TABLE conversation_sessions (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id varchar(255) NOT NULL,
    started_at timestamptz NOT NULL DEFAULT now(),
    ended_at timestamptz
);
CREATE TABLE conversations (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    session_id uuid NOT NULL,
    user_id varchar(255) NOT NULL,
    role varchar(20) NOT NULL,
    content text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- The seed's cases (001 TC-B01..B12, TC-H03), one row each, with known ids.
INSERT INTO embeddings (id, user_id, content, memory_type, metadata, created_at, embedding) VALUES
('00000000-0000-0000-0000-0000000000b1', 'seed', 'trait with metadata', 'trait',
 '{"trait_subtype":"preference","trait_stage":"emerging","confidence":0.75,"context":"work","reinforcement_count":3,"contradiction_count":1,"derived_from":"reflection"}',
 '2024-03-01T10:00:00Z', NULL),
('00000000-0000-0000-0000-0000000000b3', 'seed', 'general one', 'general', '{"source":"chat"}', '2024-03-02T10:00:00Z', NULL),
('00000000-0000-0000-0000-0000000000b4', 'seed', 'an insight', 'insight', '{}', '2024-03-03T10:00:00Z', NULL),
('00000000-0000-0000-0000-0000000000b9', 'seed', 'trait keeps extra metadata', 'trait',
 '{"trait_subtype":"preference","extra_field":"keep_me","emotion":{"valence":0.5}}', '2024-03-04T10:00:00Z', NULL),
('00000000-0000-0000-0000-000000000b10', 'seed', 'null metadata trait', 'trait', NULL, '2024-03-05T10:00:00Z', NULL),
('00000000-0000-0000-0000-000000000b11', 'seed', 'empty metadata trait', 'trait', '{}', '2024-03-06T10:00:00Z', NULL),
('00000000-0000-0000-0000-000000000b12', 'seed', '用户在Google工作，喜欢Python和JavaScript', 'fact', NULL, '2024-03-07T10:00:00Z', NULL),
('00000000-0000-0000-0000-0000000000f1', 'seed', 'bad metadata values', 'trait',
 '{"trait_subtype":"behavior","confidence":"high","reinforcement_count":"many","parent_id":"not-a-uuid","first_observed":"2024-01-02T03:04:05Z"}',
 '2024-03-08T10:00:00Z', NULL),
('00000000-0000-0000-0000-0000000000a3', 'seed', 'known vector', 'fact', '{}', '2024-03-09T10:00:00Z',
 (SELECT array_agg(((g % 10) + 1) / 10.0 ORDER BY g)::vector(1024) FROM generate_series(0, 1023) g));

INSERT INTO embeddings (id, user_id, content, memory_type, metadata, created_at, trait_subtype) VALUES
('00000000-0000-0000-0000-0000000000b2', 'seed', 'trait already filled', 'trait',
 '{"trait_subtype":"preference","confidence":0.9}', '2024-03-10T10:00:00Z', 'behavior');
INSERT INTO embeddings (id, user_id, content, memory_type, metadata, created_at, content_hash) VALUES
('00000000-0000-0000-0000-0000000000b6', 'seed', 'has a hash', 'fact', '{}', '2024-03-11T10:00:00Z', 'abc123');
INSERT INTO embeddings (id, user_id, content, memory_type, metadata, created_at, valid_from) VALUES
('00000000-0000-0000-0000-00000000b07a', 'seed', 'valid from set', 'fact', '{}', '2024-01-05T00:00:00Z', '2024-01-01T00:00:00Z'),
('00000000-0000-0000-0000-00000000b07b', 'seed', 'valid from unset', 'fact', '{}', '2024-02-01T00:00:00Z', NULL);

-- The seed's V1 dataset (001 §5.1) and boundary cases (§5.2).
INSERT INTO embeddings (id, user_id, content, memory_type, metadata, created_at) VALUES
('00000000-0000-0000-0000-0000000000c1', 'seed-v1', '用户在 Google 工作', 'general',
 '{"category": "work", "importance": 8}', '2024-04-01T00:00:00Z'),
('00000000-0000-0000-0000-0000000000c2', 'seed-v1', '用户偏好 Python 语言', 'insight',
 '{"trait_subtype": "preference", "trait_stage": "emerging", "confidence": 0.75, "context": "work", "reinforcement_count": 3}',
 '2024-04-02T00:00:00Z'),
('00000000-0000-0000-0000-0000000000c3', 'seed-v1', '2024-01-15 参加技术大会', 'episodic',
 '{"timestamp": "2024-01-15", "importance": 6}', '2024-04-03T00:00:00Z'),
('00000000-0000-0000-0000-0000000000c4', 'seed-v1', '用户性格外向', 'insight',
 '{"trait_subtype": "core", "confidence": 0.9}', '2024-04-04T00:00:00Z'),
('00000000-0000-0000-0000-0000000000c5', 'seed-v1', 'Python 是强类型语言', 'fact',
 '{"category": "tech"}', '2024-04-05T00:00:00Z'),
('00000000-0000-0000-0000-0000000000e1', 'seed-v1', '', 'fact', NULL, '2024-04-06T00:00:00Z'),
('00000000-0000-0000-0000-0000000000e2', 'seed-v1', '用户说Hello World', 'fact', '{"unknown": "value"}',
 '2024-04-07T00:00:00Z');

-- Generated: :rows rows over 200 users, every V1 type, CJK and Latin text, NULL / empty /
-- plain / trait metadata, a vector on nine rows in ten.
INSERT INTO embeddings (user_id, content, memory_type, metadata, created_at, valid_from,
                        version, access_count, embedding)
SELECT 'user-' || (i % 200),
       CASE i % 3 WHEN 0 THEN '用户第' || i || '条记忆：周末喜欢在北京的咖啡馆看书'
                  WHEN 1 THEN 'Memory ' || i || ': prefers green tea over coffee'
                  ELSE '混合 mixed 内容 ' || i || ' — naïve café ☕' END,
       (ARRAY['general', 'insight', 'fact', 'episodic', 'document', 'trait'])[1 + i % 6],
       CASE i % 4 WHEN 0 THEN NULL WHEN 1 THEN '{}'::jsonb
                  WHEN 2 THEN jsonb_build_object('source', 'chat', 'n', i)
                  ELSE jsonb_build_object('trait_subtype', 'behavior', 'confidence', (i % 100) / 100.0,
                                          'context', 'work', 'reinforcement_count', i % 7) END,
       timestamptz '2024-01-01 00:00:00+00' + i * interval '1 hour',
       CASE WHEN i % 5 = 0 THEN timestamptz '2023-12-01 00:00:00+00' END,
       1 + i % 3, i % 11,
       CASE WHEN i % 10 <> 0 THEN
           (SELECT array_agg(sin(i * 0.37 + g * 0.11) ORDER BY g)::vector(1024)
            FROM generate_series(1, 1024) g) END
FROM generate_series(1, :rows) AS i;

-- V1's indexes, the vector ones among them (built after the rows, as a bulk load would).
CREATE INDEX ix_emb_user ON embeddings (user_id);
CREATE INDEX ix_emb_embedding ON embeddings USING hnsw (embedding vector_cosine_ops);
CREATE INDEX ix_emb_embedding_l2 ON embeddings USING ivfflat (embedding vector_l2_ops)
    WITH (lists = 20);

-- What V1 held, kept aside (another schema: migrate does not touch it) for comparison.
CREATE SCHEMA v1_snapshot;
CREATE TABLE v1_snapshot.embeddings AS SELECT * FROM embeddings;
