"""What the service does with what the extractor finds: nothing is taken from the assistant or the
instructions, a later statement supersedes the place said before, one message's home is the one
stored, and the facts block is ranked by relevance (lexical, and semantic with a provider) within its
token cap. The phrasings themselves are the rule package's tests (extractor/tests)."""

from __future__ import annotations

import pytest

from memories import context, services
from memories.context import PARAMETERS
from memories.models import Fact
from tests.fixtures.background import converse, drain
from tests.fixtures.embed_stub import EmbeddingsStub


def test_nothing_comes_from_the_assistant_or_the_instructions(cast):
    memory, _ = services.memory_create(project=cast.project_a)
    services.memory_decorate(
        memory=memory,
        instructions="Call me Robert. I live in Madrid.",
        messages=[{"role": "user", "content": "Just call me Zoë."}],
    )
    services.report_accept(
        memory=memory,
        failures=[],
        messages=[
            {
                "role": "assistant",
                "content": "Friends call me Assistant. I reside in Zürich and I'm obsessed with chess.",
            }
        ],
    )
    drain()
    assert list(Fact.objects.filter(memory=memory).values_list("text", flat=True)) == ["User's name is Zoë"]


def test_a_correction_supersedes_the_place_said_before(cast):
    memory, _ = services.memory_create(project=cast.project_a)
    converse(memory, [["I live in Kraków.", "Nice."], ["Update: I live in Malmö now.", "Noted."]])
    drain()
    assert list(
        Fact.objects.filter(memory=memory, active=True, slot="location").values_list("text", flat=True)
    ) == ["User lives in Malmö"]
    assert Fact.objects.get(memory=memory, text="User lives in Kraków").active is False


def test_the_home_a_message_states_is_the_one_stored_not_the_work_place_before_it(cast):
    memory, _ = services.memory_create(project=cast.project_a)
    converse(
        memory, [["Hola! Soy Tomás, luthier in Cuenca. Actually I moved to Valencia last spring.", "¡Hola!"]]
    )
    drain()
    facts = set(Fact.objects.filter(memory=memory, active=True).values_list("text", flat=True))
    assert {"User lives in Valencia", "User's name is Tomás"} <= facts
    assert "User lives in Cuenca" not in facts and not any("Soy" in f for f in facts)


# --- the facts block: relevant, then recent, within its cap -------------------------------------------


def test_an_old_relevant_fact_survives_the_cap_and_comes_first(cast):
    memory, _ = services.memory_create(project=cast.project_a)
    allergy = "User is allergic to peanuts, " + "y" * 300  # as large as the others: no room left over for it
    services.fact_create(memory=memory, text=allergy)
    for i in range(40):
        services.fact_create(memory=memory, text=f"User noted item {i} " + "z" * 300)
    ctx = context.context_build(
        memory=memory,
        budget_tokens=6000,
        new_messages=[{"role": "user", "content": "Can I eat peanuts in this satay?"}],
    )
    assert ctx.facts[0]["text"] == allergy
    assert sum(Fact.objects.get(pk=f["id"]).tokens for f in ctx.facts) <= PARAMETERS.facts_token_cap
    assert len(ctx.facts) < 41  # the cap dropped some of the newer ones, not the relevant one
    plain = context.context_build(
        memory=memory, budget_tokens=6000, new_messages=[{"role": "user", "content": "hi"}]
    )
    assert plain.facts[0]["text"].startswith("User noted item 39 ")  # no overlap: newest first, and the cap
    assert allergy not in [f["text"] for f in plain.facts]


@pytest.fixture
def stub(settings):
    settings.THREADLESS_EGRESS_ALLOW = ["127.0.0.1"]
    with EmbeddingsStub() as server:
        yield server


def _with_provider(project, stub):
    project.model_config = {
        "embeddings": {"provider": "openai", "model": "stub-embed-1", "baseUrl": stub.url}
    }
    project.save(update_fields=["model_config"])


def test_with_a_provider_a_fact_sharing_no_word_with_the_message_ranks_first(cast, stub):
    _with_provider(cast.project_a, stub)
    memory, _ = services.memory_create(project=cast.project_a)
    converse(
        memory,
        [
            ["I have a beagle named Biscuit.", "Lovely."],
            ["I work at Siemens.", "Nice."],
            ["I live in Kraków.", "Great city."],
            ["I love jazz.", "Me too."],
            ["I'm vegetarian.", "Noted."],
        ],
    )
    drain()
    assert Fact.objects.filter(memory=memory, active=True).count() == 5
    stub.requests.clear()
    question = "Is my pup ok in hot weather?"
    ctx = context.context_build(
        memory=memory, new_messages=[{"role": "user", "content": question}], budget_tokens=6000
    )
    assert ctx.facts[0]["text"] == "User has a beagle named Biscuit"
    assert stub.inputs() == [question]  # one query embedding, shared with the recall block


def test_without_a_provider_the_same_message_leaves_the_newest_fact_first(cast):
    memory, _ = services.memory_create(project=cast.project_a)
    converse(memory, [["I have a beagle named Biscuit.", "Lovely."], ["I love jazz.", "Me too."]])
    drain()
    ctx = context.context_build(
        memory=memory,
        budget_tokens=6000,
        new_messages=[{"role": "user", "content": "Is my pup ok in hot weather?"}],
    )
    assert [f["text"] for f in ctx.facts] == ["User likes jazz", "User has a beagle named Biscuit"]
