"""Reflection benchmark: one cycle over 5,000 new memories, and the trait lifecycle's upkeep
over 100,000 traits.

    .venv/bin/python -m neuromem_site.devstack exec --temporary -- \
        .venv/bin/python bench/reflection.py                      # 5,000 memories, 100,000 traits
    ... bench/reflection.py --memories 300 --traits 2000 --json /tmp/reflection.json

1. **Cycle.** One user gets `--memories` unreflected facts and episodes (short English
   sentences from templates over 52 topics with varying slots, about a quarter in Chinese),
   written with COPY (`memories.vectors.copy_memories`), embeddings left `pending`: the offline
   detector embeds the texts itself. A cycle is then queued and run as the worker runs it
   (`reflection_cycle_request`, `reflection_cycle_run`), with its phases timed: load
   (`cycle_state_load`), plan (`cycle_plan`; its embedding, `OfflineDetector.vectors`, apart),
   apply (`cycle_apply`, in the cycle's transaction). Baseline: embedding the same texts once
   with the provider, the floor of any cycle that embeds what it reflects on (measured before
   and after the cycle; the lower is the baseline).
2. **Upkeep.** `--traits` traits over `--trait-users` users (random subtypes, stages
   emerging/established/core and some trends, confidences by stage, reinforcement counts,
   last reinforced within the past 3 years), written with COPY; then beat's jobs, each twice
   (the second run has nothing left to change): `trait_view_refresh()` (REFRESH MATERIALIZED
   VIEW CONCURRENTLY), `trends_expire(now=...)`, `traits_dissolve_weak(now=...)`, and the
   refresh once more after them. Baselines: a plain (non-concurrent) REFRESH of the same view
   and `SELECT count(*)` over the trait partition, both in the same run.

Runs on the embedded services in a throw-away directory (or DATABASE_URL / REDIS_URL) and
prints Markdown for docs/benchmarks.md; --json writes the numbers too.
"""

import argparse
import json
import random
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict
from datetime import timedelta
from functools import wraps
from pathlib import Path
from typing import Any

import bootstrap  # noqa: F401

# isort: split
from common import machine, machine_summary, memories_copy, sql
from django.conf import settings
from django.core.management import call_command
from django.db import connection, transaction
from django.utils import timezone
from psycopg.types.json import Jsonb

from core.access import SYSTEM
from core.db.actor import audit_actor
from memories.embeddings import embedding_provider
from memories.models import Memory, MemoryType
from memories.services import content_md5
from memories.vectors import copy_memories
from reflection import detection, wording
from reflection.detection import said_by_user
from reflection.models import TraitEvidence
from reflection.services import cycles
from reflection.services.cycles import reflection_cycle_request, reflection_cycle_run
from reflection.services.maintenance import (
    VIEW,
    trait_view_refresh,
    traits_dissolve_weak,
    trends_expire,
)

# --- Memories for the cycle --------------------------------------------------------------------

# Per topic: English templates, Chinese templates (possibly none). Slots: {when} {n} {who}
# {city} {dish} {title}, and {when_zh} {n} {dish_zh} in Chinese.
TOPICS: list[tuple[list[str], list[str]]] = [
    (
        [
            "went for a {n}k run {when}",
            "I run before work almost every day",
            "my knee hurt after the run {when}",
            "ran along the river with {who} {when}",
        ],
        ["{when_zh}跑了{n}公里", "我每天早上都去跑步", "跑完步膝盖有点疼"],
    ),
    (
        [
            "had {n} espressos while coding {when}",
            "I drink way too much coffee at work",
            "tried a new pour-over coffee place {when}",
        ],
        ["{when_zh}又喝了{n}杯咖啡", "写代码的时候离不开咖啡"],
    ),
    (
        [
            "I prefer green tea to coffee in the afternoon",
            "brewed a pot of jasmine tea {when}",
            "bought some oolong tea in {city}",
        ],
        ["我喜欢下午喝绿茶", "{when_zh}泡了一壶茉莉花茶"],
    ),
    (
        [
            "cooked {dish} for the family {when}",
            "I love cooking on weekends",
            "tried a new recipe for {dish} {when}",
        ],
        ["{when_zh}在家做了{dish_zh}", "周末喜欢在家做饭"],
    ),
    (
        [
            "slept only {n} hours {when}",
            "I usually go to bed after midnight",
            "couldn't sleep well {when}, kept waking up",
        ],
        ["{when_zh}只睡了{n}个小时", "最近总是睡不好"],
    ),
    (
        [
            "did a leg workout at the gym {when}",
            "went to the gym with {who} {when}",
            "I lift weights three times a week",
        ],
        ["{when_zh}去健身房练了腿", "每周去三次健身房"],
    ),
    (
        [
            "did a {n}0-minute yoga session {when}",
            "yoga helps me relax after work",
            "joined a new yoga class {when}",
        ],
        [],
    ),
    (
        [
            "finished reading a sci-fi novel {when}",
            "I love reading science fiction before bed",
            "started a new book by Ursula Le Guin {when}",
        ],
        ["我喜欢看科幻小说", "{when_zh}看完了一本科幻小说"],
    ),
    (
        [
            "practised guitar for {n}0 minutes {when}",
            "learning a new song on the guitar",
            "my guitar teacher said I'm improving",
        ],
        ["{when_zh}练了{n}0分钟吉他"],
    ),
    (
        [
            "played the piano for an hour {when}",
            "working on a Chopin nocturne on the piano",
            "my piano needs tuning again",
        ],
        [],
    ),
    (
        [
            "studied Spanish vocabulary {when}",
            "I practise Spanish on Duolingo every day",
            "had a Spanish lesson with my tutor {when}",
        ],
        [],
    ),
    (
        [
            "learned {n} new kanji {when}",
            "I'm studying Japanese for a trip next year",
            "watched an anime without subtitles {when}",
        ],
        ["{when_zh}学了{n}个日语单词"],
    ),
    (
        [
            "sat through {n} meetings {when}",
            "I hate long meetings that could have been an email",
            "the standup ran over again {when}",
        ],
        ["{when_zh}开了{n}个会", "不喜欢开很长的会"],
    ),
    (
        [
            "I'm so stressed about the project deadline",
            "worked late {when} to hit the deadline",
            "the client moved the deadline up again",
        ],
        ["项目截止日期快到了，压力好大", "{when_zh}为了赶项目加班到很晚"],
    ),
    (
        [
            "spent {when} debugging a flaky test",
            "fixed a nasty memory leak {when}",
            "debugging race conditions drives me crazy",
        ],
        ["{when_zh}调试了一整天代码"],
    ),
    (
        [
            "reviewed {n} pull requests {when}",
            "I enjoy doing code reviews in the morning",
            "got a tough code review from {who} {when}",
        ],
        [],
    ),
    (
        [
            "worked from home {when}",
            "I prefer working from home to the office",
            "the office was too loud {when}",
        ],
        ["{when_zh}在家办公", "我更喜欢在家工作"],
    ),
    (
        [
            "the train to work was late {when}",
            "my commute takes about {n}0 minutes",
            "listened to a podcast on the commute {when}",
        ],
        [],
    ),
    (
        [
            "rode {n}0 km on my bike {when}",
            "went cycling along the coast with {who} {when}",
            "I cycle to work when it's not raining",
        ],
        ["{when_zh}骑自行车骑了{n}0公里"],
    ),
    (
        [
            "went hiking in the mountains {when}",
            "hiked {n} km with {who} {when}",
            "I love hiking on quiet trails",
        ],
        ["{when_zh}去爬山了", "我喜欢周末去爬山"],
    ),
    (
        [
            "swam {n}0 laps at the pool {when}",
            "I go swimming every Wednesday evening",
            "the pool was closed {when}",
        ],
        ["{when_zh}去游泳了"],
    ),
    (
        [
            "planning a trip to Tokyo in the spring",
            "booked flights to Osaka {when}",
            "looking for a ryokan near Kyoto",
        ],
        ["计划春天去东京旅行"],
    ),
    (
        [
            "visited {city} {when}",
            "I'd love to spend a month in {city}",
            "got back from a long weekend in {city}",
        ],
        ["{when_zh}去了{city}"],
    ),
    (
        [
            "took the dog for a long walk {when}",
            "my dog Biscuit chewed my shoes {when}",
            "the vet said Biscuit needs more exercise",
        ],
        ["{when_zh}带狗去散步了", "我家的狗又把鞋咬坏了"],
    ),
    (
        [
            "the cat knocked a glass off the table {when}",
            "bought a new scratching post for the cat",
            "my cat sleeps on my keyboard while I work",
        ],
        ["{when_zh}给猫买了新的猫爬架"],
    ),
    (
        [
            "called my sister in Berlin {when}",
            "my mom visited {when}",
            "had dinner with my parents {when}",
        ],
        ["{when_zh}给妈妈打了电话", "{when_zh}和爸妈一起吃饭"],
    ),
    (
        [
            "took my daughter to the park {when}",
            "helped my son with his maths homework {when}",
            "the kids had a school concert {when}",
        ],
        ["{when_zh}带女儿去公园玩"],
    ),
    (
        [
            "had dinner with friends {when}",
            "went to {who}'s birthday party {when}",
            "I enjoy hanging out with friends on Fridays",
        ],
        ["{when_zh}和朋友聚餐", "周五喜欢和朋友出去玩"],
    ),
    (
        [
            "watched {title} {when}",
            "I love old science fiction films",
            "fell asleep during a movie {when}",
        ],
        ["{when_zh}看了一部电影"],
    ),
    (
        [
            "binged {n} episodes of a crime series {when}",
            "I don't watch much TV these days",
            "started a new Korean drama {when}",
        ],
        ["{when_zh}追了{n}集韩剧"],
    ),
    (
        [
            "played Zelda for {n} hours {when}",
            "I usually play video games to unwind",
            "beat the final boss {when}",
        ],
        ["{when_zh}玩了{n}个小时游戏"],
    ),
    (
        [
            "went to a jazz concert {when}",
            "bought tickets to see a band in {city}",
            "I listen to classical music while working",
        ],
        ["{when_zh}去听了音乐会"],
    ),
    (
        [
            "listened to a history podcast {when}",
            "I love podcasts about economics",
            "recommended a podcast to {who}",
        ],
        [],
    ),
    (
        [
            "planted tomatoes in the garden {when}",
            "watered the plants {when}",
            "the basil on the balcony is finally growing",
        ],
        ["{when_zh}在阳台种了番茄"],
    ),
    (
        [
            "baked sourdough bread {when}",
            "my sourdough starter died again",
            "I like baking on rainy afternoons",
        ],
        ["{when_zh}烤了面包"],
    ),
    (
        [
            "I'm trying to eat less meat",
            "had a vegetarian lunch {when}",
            "I don't eat pork",
        ],
        ["我不吃猪肉", "最近在尽量少吃肉"],
    ),
    (
        [
            "I'm allergic to peanuts",
            "had a mild allergic reaction {when}",
            "always check the menu for nuts",
        ],
        ["我对花生过敏"],
    ),
    (
        [
            "I love spicy Sichuan food",
            "ate hot pot with {who} {when}",
            "ordered the spiciest curry on the menu {when}",
        ],
        ["我特别喜欢吃辣", "{when_zh}和朋友吃了火锅"],
    ),
    (
        [
            "had sushi for lunch {when}",
            "found a great ramen place near the office",
            "I could eat dumplings every day",
        ],
        ["{when_zh}吃了寿司", "我最爱吃饺子"],
    ),
    (
        [
            "tracked my spending {when}",
            "I'm saving for a new laptop",
            "spent too much on takeout this month",
        ],
        ["这个月外卖花了太多钱"],
    ),
    (
        [
            "put some money into an index fund {when}",
            "I check my investments too often",
            "read about bond yields {when}",
        ],
        [],
    ),
    (
        [
            "ordered {n} things online {when}",
            "I avoid shopping malls on weekends",
            "returned a jacket that didn't fit",
        ],
        ["{when_zh}网购了{n}件东西"],
    ),
    (
        [
            "had a check-up with the doctor {when}",
            "my blood pressure was a bit high",
            "the dentist says I need a filling",
        ],
        ["{when_zh}去医院做了体检"],
    ),
    (
        [
            "had a bad headache {when}",
            "I get migraines when I skip lunch",
            "took a painkiller for my headache {when}",
        ],
        ["{when_zh}头疼得厉害"],
    ),
    (
        [
            "took photos of the sunset {when}",
            "bought a new lens for my camera",
            "I love street photography in {city}",
        ],
        [],
    ),
    (
        [
            "painted a watercolour of the harbour {when}",
            "I sketch in a notebook every evening",
            "signed up for a drawing class",
        ],
        ["{when_zh}画了一幅水彩画"],
    ),
    (
        [
            "volunteered at the food bank {when}",
            "helped clean up the beach with {who} {when}",
            "I try to volunteer once a month",
        ],
        [],
    ),
    (
        [
            "it rained all day {when}",
            "I hate cold rainy days",
            "the heat {when} was unbearable",
        ],
        ["{when_zh}下了一整天雨", "我讨厌下雨天"],
    ),
    (
        [
            "looked at {n} apartments near the city centre {when}",
            "signed the lease on a new flat {when}",
            "the new neighbours are really noisy",
        ],
        ["{when_zh}去看了{n}套房子"],
    ),
    (
        [
            "took the car in for a service {when}",
            "the car battery died {when}",
            "I'm thinking about buying an electric car",
        ],
        ["{when_zh}把车送去保养了"],
    ),
    (
        [
            "played chess online for {n} hours {when}",
            "lost a chess game to {who} {when}",
            "I'm studying chess openings",
        ],
        ["{when_zh}下了{n}盘国际象棋"],
    ),
    (
        [
            "meditated for {n}0 minutes {when}",
            "meditation helps me when I'm anxious",
            "skipped meditation {when}, felt scattered",
        ],
        ["{when_zh}冥想了{n}0分钟"],
    ),
]
WHEN = [
    "this morning",
    "yesterday",
    "last night",
    "on Sunday",
    "on Saturday",
    "after work",
    "before breakfast",
    "at lunch",
    "today",
    "last weekend",
    "on Monday evening",
    "over the holiday",
]
WHEN_ZH = ["今天早上", "昨天", "昨晚", "周日", "周六", "下班后", "中午", "今天", "上周末"]
WHO = ["Anna", "Tom", "Li Wei", "Priya", "Marco", "my brother", "a colleague", "Sam", "my wife"]
CITIES = ["Lisbon", "Berlin", "Kyoto", "Barcelona", "Prague", "Vienna", "Seoul", "Montreal"]
DISHES = [("lasagne", "千层面"), ("a curry", "咖喱"), ("dumplings", "饺子"), ("paella", "海鲜饭")]
TITLES = ["Blade Runner", "Arrival", "Alien", "Dune", "Interstellar", "Solaris"]
ASIDES = [
    "",
    "",
    "",
    " again",
    ", felt great",
    ", it was exhausting",
    " and loved it",
    ", not bad at all",
    ", honestly",
]
QUESTIONS = [("How was your day?", "今天怎么样？"), ("What did you do?", "你做了什么？")]


def sentence(rng: random.Random, topic: int, chinese: bool) -> str:
    english, zh = TOPICS[topic]
    dish, dish_zh = rng.choice(DISHES)
    slots = {
        "when": rng.choice(WHEN),
        "when_zh": rng.choice(WHEN_ZH),
        "n": rng.randint(2, 9),
        "who": rng.choice(WHO),
        "city": rng.choice(CITIES),
        "dish": dish,
        "dish_zh": dish_zh,
        "title": rng.choice(TITLES),
    }
    if chinese:
        return rng.choice(zh).format(**slots) + rng.choice(["", "。", "！"])
    text = rng.choice(english).format(**slots) + rng.choice(ASIDES)
    return text[0].upper() + text[1:]


def cycle_memories(user_id: str, count: int, rng: random.Random) -> list[Memory]:
    """Unreflected facts and episodes over the past three weeks: topics Zipf-like (a few
    come up often, most now and then), ~20% in Chinese where the topic has Chinese wording;
    episodes as the conversation path writes them ("User: …", sometimes after the assistant's
    question)."""
    weights = [1 / (rank + 1) ** 0.7 for rank in range(len(TOPICS))]
    now = timezone.now()
    started = now - timedelta(days=21)
    memories = []
    for n in range(count):
        topic = rng.choices(range(len(TOPICS)), weights)[0]
        chinese = bool(TOPICS[topic][1]) and rng.random() < 0.3
        text = sentence(rng, topic, chinese)
        if rng.random() < 0.4:
            memory_type, content = MemoryType.FACT, text
        else:
            memory_type = MemoryType.EPISODIC
            user, assistant = ("用户：", "助手：") if chinese else ("User: ", "Assistant: ")
            content = f"{user}{text}"
            if rng.random() < 0.25:
                question = rng.choice(QUESTIONS)[chinese]
                content = f"{assistant}{question} → {content}"
        created = started + (now - started) * (n + rng.random()) / count
        memories.append(
            Memory(
                id=uuid.uuid4(),
                user_id=user_id,
                memory_type=memory_type,
                content=content,
                content_hash=content_md5(content),
                importance=round(rng.uniform(0.3, 0.8), 2),
                created_at=created,
                valid_at=created,
                metadata={},
            )
        )
    return memories


def memories_load(memories: list[Memory]) -> float:
    started = time.perf_counter()
    with transaction.atomic(), audit_actor("bench"):
        copy_memories(memories)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memories")
    return time.perf_counter() - started


class Timer:
    """Seconds spent in the wrapped functions, by label."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self.texts = 0

    def wrap(self, label: str, function: Callable) -> Callable:
        @wraps(function)
        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds[label] = self.seconds.get(label, 0.0) + time.perf_counter() - started
                self.calls[label] = self.calls.get(label, 0) + 1

        return timed


def embedding_floor(texts: list[str]) -> float:
    started = time.perf_counter()
    embedding_provider().embed(texts)
    return time.perf_counter() - started


def cycle_run(user_id: str) -> tuple[float, Timer, Any]:
    """Queue and run the user's cycle as the worker would, its phases timed."""
    timer = Timer()
    patched = {
        (cycles, "cycle_state_load"): timer.wrap("load", cycles.cycle_state_load),
        (cycles, "cycle_plan"): timer.wrap("plan", cycles.cycle_plan),
        (cycles, "cycle_apply"): timer.wrap("apply", cycles.cycle_apply),
    }
    vectors = detection.OfflineDetector.vectors

    def counted(self, texts):
        timer.texts += len(texts)
        return vectors(self, texts)

    patched[(detection.OfflineDetector, "vectors")] = timer.wrap("embedding", counted)
    originals = {key: getattr(*key) for key in patched}
    for (owner, name), wrapper in patched.items():
        setattr(owner, name, wrapper)
    try:
        cycle, _ = reflection_cycle_request(caller=SYSTEM, user_id=user_id)
        started = time.perf_counter()
        cycle = reflection_cycle_run(cycle_id=cycle.id)
        seconds = time.perf_counter() - started
    finally:
        for (owner, name), original in originals.items():
            setattr(owner, name, original)
    if cycle.status != "completed":
        sys.exit(f"the cycle did not complete: {cycle.status}: {cycle.error_message}")
    return seconds, timer, cycle


def cycle_benchmark(count: int, rng: random.Random) -> dict[str, Any]:
    user_id = "bench-reflection"
    memories = cycle_memories(user_id, count, rng)
    load_seconds = memories_load(memories)
    print(f"  {count:,} memories written in {load_seconds:.1f} s", file=sys.stderr, flush=True)
    texts = [said_by_user(memory.content) for memory in memories]
    embedding_provider().embed(texts[:50])  # the model loaded, as in a running worker
    before = embedding_floor(texts)
    seconds, timer, cycle = cycle_run(user_id)
    after = embedding_floor(texts)
    print(f"  cycle {seconds:.1f} s, embedding alone {before:.1f} s", file=sys.stderr, flush=True)
    traits = Memory.objects.filter(user_id=user_id, memory_type=MemoryType.TRAIT)
    plan = timer.seconds.get("plan", 0.0)
    embedding = timer.seconds.get("embedding", 0.0)
    phases = timer.seconds.get("load", 0.0) + plan + timer.seconds.get("apply", 0.0)
    return {
        "memories": count,
        "facts": sum(1 for m in memories if m.memory_type == MemoryType.FACT),
        "chinese": sum(1 for t in texts if wording.is_chinese(t)),
        "write_seconds": load_seconds,
        "embedding_baseline_seconds": min(before, after),
        "embedding_baseline_runs": [before, after],
        "cycle_seconds": seconds,
        "load_seconds": timer.seconds.get("load", 0.0),
        "plan_seconds": plan,
        "plan_embedding_seconds": embedding,
        "plan_other_seconds": plan - embedding,
        "apply_seconds": timer.seconds.get("apply", 0.0),
        "other_seconds": seconds - phases,
        "plans": timer.calls.get("plan", 0),
        "texts_embedded": timer.texts,
        "memories_scanned": cycle.memories_scanned,
        "traits_created": cycle.traits_created,
        "traits_updated": cycle.traits_updated,
        "traits_dissolved": cycle.traits_dissolved,
        "behaviors": traits.exclude(trait_stage="trend").count(),
        "trends": traits.filter(trait_stage="trend").count(),
        "evidence_rows": TraitEvidence.objects.filter(trait_id__in=traits.values("id")).count(),
    }


# --- Traits for the upkeep ---------------------------------------------------------------------

TRAIT_COLUMNS = {
    "id": "uuid",
    "user_id": "varchar",
    "memory_type": "varchar",
    "content": "text",
    "embedding_status": "varchar",
    "content_hash": "varchar",
    "created_at": "timestamptz",
    "valid_at": "timestamptz",
    "importance": "float4",
    "metadata": "jsonb",
    "version": "int4",
    "trait_subtype": "varchar",
    "trait_stage": "varchar",
    "trait_confidence": "float4",
    "trait_context": "varchar",
    "trait_reinforcement_count": "int4",
    "trait_contradiction_count": "int4",
    "trait_last_reinforced": "timestamptz",
    "trait_first_observed": "timestamptz",
    "trait_window_start": "timestamptz",
    "trait_window_end": "timestamptz",
    "trait_derived_from": "varchar",
}
# Stage: (share, confidence range); trends have none.
STAGES = {
    "trend": (0.10, None),
    "emerging": (0.40, (0.3, 0.6)),
    "established": (0.35, (0.6, 0.85)),
    "core": (0.15, (0.85, 1.0)),
}
SUBTYPES = {"behavior": 0.6, "preference": 0.28, "core": 0.12}
CONTEXTS = ["work", "personal", "social", "learning", "general"]
COPY_BATCH = 20_000


def trait_row(rng: random.Random, user_id: str, now) -> list:
    stage = rng.choices(list(STAGES), [share for share, _ in STAGES.values()])[0]
    topic = rng.randrange(len(TOPICS))
    chinese = bool(TOPICS[topic][1]) and rng.random() < 0.2
    said = sentence(rng, topic, chinese)
    content = f"反复提到：{said}" if chinese else f"Repeatedly: {said}"
    last = now - timedelta(days=rng.uniform(0, 3 * 365))
    first = last - timedelta(days=rng.uniform(0, 365))
    window_start = window_end = None
    metadata: dict[str, Any] = {}
    if stage == "trend":
        # Watched since up to 40 days ago, for 30 (14 when emotional): about a quarter ended.
        emotional = rng.random() < 0.2
        window_start = now - timedelta(days=rng.uniform(0, 40))
        window_end = window_start + timedelta(days=14 if emotional else 30)
        first = last = window_start
        subtype, confidence, reinforcements = "behavior", None, rng.randint(0, 4)
        metadata["emotional"] = emotional
    else:
        subtype = rng.choices(list(SUBTYPES), list(SUBTYPES.values()))[0]
        confidence = round(rng.uniform(*STAGES[stage][1]), 4)
        reinforcements = min(50, int(rng.expovariate(1 / 4)))
    return [
        uuid.uuid4(),
        user_id,
        "trait",
        content,
        "pending",
        content_md5(content),
        first,
        first,
        round(rng.uniform(0.2, 0.9), 2),
        Jsonb(metadata),
        1,
        subtype,
        stage,
        confidence,
        rng.choice(CONTEXTS),
        reinforcements,
        rng.choices([0, 0, 0, 1, 2])[0],
        last,
        first,
        window_start,
        window_end,
        "reflection",
    ]


def traits_load(count: int, users: int, rng: random.Random) -> float:
    """COPY the traits (binary; the audit log's ADD rows skipped, as a load would), then
    VACUUM (ANALYZE) and CHECKPOINT: what autovacuum and the checkpointer do soon after."""
    started = time.perf_counter()
    now = timezone.now()
    for start in range(0, count, COPY_BATCH):
        with memories_copy(TRAIT_COLUMNS) as copy:
            for n in range(start, min(count, start + COPY_BATCH)):
                copy.write_row(trait_row(rng, f"trait-user-{n % users}", now))
    with connection.cursor() as cursor:
        cursor.execute("VACUUM (ANALYZE) memories_trait")
        cursor.execute("CHECKPOINT")
    return time.perf_counter() - started


def timed(function: Callable, *args, **kwargs) -> tuple[float, Any]:
    started = time.perf_counter()
    result = function(*args, **kwargs)
    return time.perf_counter() - started, result


def upkeep_benchmark(count: int, users: int, rng: random.Random) -> dict[str, Any]:
    load_seconds = traits_load(count, users, rng)
    print(f"  {count:,} traits written in {load_seconds:.1f} s", file=sys.stderr, flush=True)
    count_runs = [timed(sql, "SELECT count(*) FROM memories_trait")[0] for _ in range(3)]
    plain_first, _ = timed(sql, f"REFRESH MATERIALIZED VIEW {VIEW}")  # fills it
    plain, _ = timed(sql, f"REFRESH MATERIALIZED VIEW {VIEW}")
    (view_rows,) = sql(f"SELECT count(*) FROM {VIEW}")
    runs: list[dict[str, Any]] = []

    def run(label: str, function: Callable, **kwargs) -> None:
        seconds, result = timed(function, **kwargs)
        runs.append({"label": label, "seconds": seconds, "result": result})
        print(f"  {label}: {seconds:.2f} s → {result}", file=sys.stderr, flush=True)

    now = timezone.now()
    run("trait_view_refresh() 1", trait_view_refresh)
    run("trait_view_refresh() 2", trait_view_refresh)
    run("trends_expire(now) 1", lambda: asdict(trends_expire(now=now)))
    run("trends_expire(now) 2", lambda: asdict(trends_expire(now=now)))
    run("traits_dissolve_weak(now) 1", traits_dissolve_weak, now=now)
    run("traits_dissolve_weak(now) 2", traits_dissolve_weak, now=now)
    run("trait_view_refresh() 3, after the upkeep", trait_view_refresh)
    (stages,) = sql(
        "SELECT jsonb_object_agg(trait_stage, n) FROM (SELECT trait_stage, count(*) AS n"
        " FROM memories_trait GROUP BY trait_stage) s"
    )
    (size,) = sql("SELECT pg_size_pretty(pg_total_relation_size('memories_trait'))")
    return {
        "traits": count,
        "users": users,
        "write_seconds": load_seconds,
        "count_seconds": statistics.median(count_runs),
        "plain_refresh_first_seconds": plain_first,
        "plain_refresh_seconds": plain,
        "view_rows_before": view_rows,
        "stages_after": stages,
        "trait_partition_size": size,
        "runs": runs,
    }


# --- Report ------------------------------------------------------------------------------------


def cycle_report(c: dict[str, Any]) -> str:
    floor = c["embedding_baseline_seconds"]

    def row(label: str, seconds: float) -> str:
        return f"| {label} | {seconds:.2f} | {seconds / floor:.2f} |"

    before, after = c["embedding_baseline_runs"]
    return f"""
| reflection cycle, one user, {c["memories"]:,} new memories | s | × baseline |
|---|---|---|
{row("**cycle** (`reflection_cycle_run`, as the worker runs it)", c["cycle_seconds"])}
{row("load (`cycle_state_load`)", c["load_seconds"])}
{row("plan (`cycle_plan`)", c["plan_seconds"])}
{row("plan: embedding (`OfflineDetector.vectors`)", c["plan_embedding_seconds"])}
{row("plan: the rest (clustering, cues, promotion)", c["plan_other_seconds"])}
{row("apply (`cycle_apply`)", c["apply_seconds"])}
{row("the rest (claim, lock, cycle row, commit)", c["other_seconds"])}
{row("**baseline**: `embed` of the same texts once", floor)}

Memories: {c["memories"]:,} ({c["facts"]:,} facts, the rest episodes; {c["chinese"]:,} in \
Chinese), written with COPY in {c["write_seconds"]:.1f} s. Scanned {c["memories_scanned"]:,}; \
traits created {c["traits_created"]:,} ({c["behaviors"]:,} behaviors, {c["trends"]:,} trends), \
{c["evidence_rows"]:,} evidence rows; plans {c["plans"]}, texts embedded \
{c["texts_embedded"]:,}. Baseline runs (before / after the cycle): {before:.2f} / {after:.2f} s.
"""


def upkeep_report(u: dict[str, Any]) -> str:
    plain, count = u["plain_refresh_seconds"], u["count_seconds"]

    def row(label: str, seconds: float, rows: Any) -> str:
        return (
            f"| {label} | {seconds:.3f} | {rows} | {seconds / plain:.2f} | {seconds / count:.1f} |"
        )

    lines = [
        f"| trait upkeep, {u['traits']:,} traits over {u['users']:,} users | s | rows "
        "| × plain REFRESH | × count(*) |",
        "|---|---|---|---|---|",
    ]
    for entry in u["runs"]:
        result = entry["result"]
        if isinstance(result, dict):
            rows = ", ".join(f"{k} {v:,}" for k, v in result.items())
        else:
            rows = f"{result:,}" + (" in the view" if "refresh" in entry["label"] else "")
        lines.append(row(f"`{entry['label']}`", entry["seconds"], rows))
    lines.append(
        row(
            f"**baseline**: plain `REFRESH MATERIALIZED VIEW {VIEW}`",
            plain,
            f"{u['view_rows_before']:,} in the view",
        )
    )
    lines.append(
        row("**baseline**: `SELECT count(*) FROM memories_trait`", count, f"{u['traits']:,}")
    )
    return (
        "\n".join(lines)
        + f"""

Traits written with COPY, VACUUM (ANALYZE) and CHECKPOINT in {u["write_seconds"]:.1f} s; \
trait partition {u["trait_partition_size"]}. The first plain REFRESH (empty view → filled): \
{u["plain_refresh_first_seconds"]:.2f} s. Stages after the upkeep: {u["stages_after"]}.
"""
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=5_000)
    parser.add_argument("--traits", type=int, default=100_000)
    parser.add_argument("--trait-users", type=int, default=1_000)
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    rng = random.Random(7)
    cycle = cycle_benchmark(args.memories, rng)
    upkeep = upkeep_benchmark(args.traits, args.trait_users, rng)
    about = {
        **machine(),
        "provider": settings.EMBEDDING_PROVIDER,
        "model": embedding_provider().model_id,
        "detector": settings.REFLECTION_DETECTOR,
    }
    print(cycle_report(cycle))
    print(upkeep_report(upkeep))
    print(
        f"{machine_summary(about)}; provider `{about['provider']}` ({about['model']}), "
        f"detector `{about['detector']}`."
    )
    if args.json:
        args.json.write_text(
            json.dumps({"machine": about, "cycle": cycle, "upkeep": upkeep}, indent=2, default=str)
        )


if __name__ == "__main__":
    main()
