"""Memories: list and search, the timeline, digest panels, facts, the dry run and deletion."""

from __future__ import annotations

import re

from django.db import transaction

from memories.models import Entry, ErrorDigest, Fact, Memory, Turn
from memories.policy import policy_parse
from memories.services import (
    entries_append,
    fact_create,
    failure_record,
    memory_create,
    memory_decorate,
    memory_lock,
    report_accept,
)
from tests.console.conftest import POLICY


def test_the_list_finds_memories_by_external_id_and_metadata(staff_client, failed_memory, cast):
    memory_create(project=cast.project_b, external_id="bob")
    html = staff_client.get("/manage/memories/?q=ann").content.decode()
    assert failed_memory.pk in html and "bob" not in html
    html = staff_client.get(f"/manage/memories/?project={cast.project_b.pk}").content.decode()
    assert failed_memory.pk not in html and "bob" in html
    html = staff_client.get("/manage/memories/?digests=1").content.decode()
    assert failed_memory.pk in html and "bob" not in html


def test_the_list_answers_htmx_with_just_the_results(staff_client, failed_memory):
    response = staff_client.get("/manage/memories/?q=ann", HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="results"') and failed_memory.pk in html
    assert response["Vary"].count("HX-Request") == 1


def test_metadata_is_escaped_in_the_list(staff_client, failed_memory):
    html = staff_client.get("/manage/memories/").content.decode()
    assert "<b>ann</b>" not in html and "&lt;b&gt;ann&lt;/b&gt;" in html


def test_the_timeline_groups_entries_by_turn(staff_client, failed_memory):
    html = staff_client.get(f"/manage/memories/{failed_memory.pk}/").content.decode()
    assert 'id="turn-1"' in html and 'id="turn-2"' in html
    turn1 = html[html.index('id="turn-1"') :]
    assert "Hi Ann." in turn1


def test_the_timeline_lists_the_newest_turn_first_and_can_show_the_oldest_first(staff_client, failed_memory):
    html = staff_client.get(f"/manage/memories/{failed_memory.pk}/").content.decode()
    assert "newest first" in html
    assert html.index('id="turn-2"') < html.index('id="turn-1"')
    assert "Show oldest first" in html
    html = staff_client.get(
        f"/manage/memories/{failed_memory.pk}/?tab=timeline&order=oldest"
    ).content.decode()
    assert "oldest first" in html and "Show newest first" in html
    assert html.index('id="turn-1"') < html.index('id="turn-2"')


def test_an_unknown_tab_shows_the_timeline(staff_client, failed_memory):
    html = staff_client.get(f"/manage/memories/{failed_memory.pk}/?tab=settings").content.decode()
    assert re.search(r'aria-current="page">Timeline</a>', html) and 'id="turn-2"' in html


def test_oldest_first_pages_start_at_the_first_turn(staff_client, cast):
    memory, _ = memory_create(project=cast.project_a)
    with transaction.atomic():
        entries_append(
            memory=memory_lock(memory),
            items=[
                {"kind": "message", "role": "user", "content": f"question {i}", "tokens": 7}
                for i in range(1, 46)
            ],
        )
    html = staff_client.get(f"/manage/memories/{memory.pk}/?tab=timeline&order=oldest").content.decode()
    assert "Turns 1–20 of 45" in html and html.index('id="turn-1"') < html.index('id="turn-20"')
    assert "order=oldest&amp;page=2" in html and "Newer turns" in html
    html = staff_client.get(f"/manage/memories/{memory.pk}/?order=oldest&turn=44").content.decode()
    assert "Turns 41–45 of 45" in html


def _turn_head(html: str, number: int) -> str:
    start = html.index(f'id="turn-{number}"')
    return html[start : html.index('class="turn-body"', start)]


def test_turn_states_read_as_words_and_a_failed_task_marks_its_turn_failed(staff_client, failed_memory):
    html = staff_client.get(f"/manage/memories/{failed_memory.pk}/").content.decode()
    assert ">Failed<" in _turn_head(html, 2) and ">Answered<" not in _turn_head(html, 2)
    assert ">Answered<" in _turn_head(html, 1) and "READY<" not in html


def test_an_interrupted_turn_and_a_running_turn_whose_lease_expired_read_interrupted(staff_client, cast):
    from datetime import timedelta

    from django.utils import timezone

    memory, _ = memory_create(project=cast.project_a)
    memory_decorate(memory=memory, messages=[{"role": "user", "content": "one"}])
    memory_decorate(memory=memory, messages=[{"role": "user", "content": "two"}])
    Turn.objects.filter(memory=memory, number=1).update(state="EXECUTION_INTERRUPTED")
    Turn.objects.filter(memory=memory, number=2).update(
        state="IN_PROGRESS", lease_expires_at=timezone.now() - timedelta(minutes=1)
    )
    html = staff_client.get(f"/manage/memories/{memory.pk}/").content.decode()
    assert ">Interrupted<" in _turn_head(html, 1) and ">Interrupted<" in _turn_head(html, 2)


def test_a_failed_task_without_strict_write_discipline_is_marked_failed_too(staff_client, cast):
    memory, _ = memory_create(project=cast.project_a)
    memory_decorate(memory=memory, messages=[{"role": "user", "content": "Hi"}])
    report_accept(
        memory=memory,
        messages=[],
        failures=[
            {
                "task_id": "proxy.openai",
                "error": "HTTP 502 upstream down",
                "output": None,
                "has_output": False,
            }
        ],
    )
    html = staff_client.get(f"/manage/memories/{memory.pk}/").content.decode()
    assert ">Failed<" in html and "HTTP 502 upstream down" in html


def test_a_raw_error_its_digest_carries_is_shown_once(staff_client, failed_memory):
    html = staff_client.get(f"/manage/memories/{failed_memory.pk}/").content.decode()
    assert html.count("java.net.ConnectException") == 1
    digest = Entry.objects.get(memory=failed_memory, kind="digest")
    assert f"shown in the error digest #{digest.seq}" in html


def test_a_short_digest_text_is_shown_once_and_a_long_one_whole_in_its_panel(staff_client, failed_memory):
    from django.utils.html import escape

    digest = Entry.objects.get(memory=failed_memory, kind="digest")
    assert len(digest.content) <= 110
    html = staff_client.get(f"/manage/memories/{failed_memory.pk}/").content.decode()
    assert html.count(escape(digest.content)) == 1 and "Digest text" not in html
    Entry.objects.filter(pk=digest.pk).update(content="Task 'weather' failed: " + "a long reason " * 12)
    html = staff_client.get(f"/manage/memories/{failed_memory.pk}/").content.decode()
    assert "Digest text" in html and html.count("a long reason " * 12) == 1


def test_a_script_in_a_message_renders_as_text(staff_client, failed_memory):
    html = staff_client.get(f"/manage/memories/{failed_memory.pk}/").content.decode()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_uncommitted_entries_are_marked_hidden_from_the_model(staff_client, failed_memory):
    html = staff_client.get(f"/manage/memories/{failed_memory.pk}/").content.decode()
    hidden = Entry.objects.filter(memory=failed_memory, committed=False)
    assert hidden.count() == 2  # the failed task's data and raw error
    for entry in hidden:
        block = html[html.index(f'id="entry-{entry.seq}"') - 40 :]
        block = block[: block.index("entry-body")]
        assert "uncommitted" in block and "hidden from the model" in block


def test_a_digest_is_a_disclosure_button_with_its_raw_error(staff_client, failed_memory):
    digest = ErrorDigest.objects.get(memory=failed_memory)
    html = staff_client.get(f"/manage/memories/{failed_memory.pk}/").content.decode()
    match = re.search(
        r'<button type="button" class="digest-toggle" data-disclosure aria-expanded="false" '
        r'aria-controls="(digest-\d+)">',
        html,
    )
    assert match, "digest panel button missing"
    panel = html[html.index(f'id="{match.group(1)}"') :]
    panel = panel[: panel.index("</pre>")]
    assert " hidden>" in panel[:80]
    assert '<svg class="icon"' in html
    button = html[match.start() : html.index("</button>", match.start())]
    assert digest.text.replace("'", "&#x27;") in button  # short: whole in the button, not again in the panel
    assert "java.net.ConnectException" in panel
    assert "sk-abcdefghijklmnopqrstu" not in html  # secrets are redacted even for staff


def test_jump_to_a_turn_opens_the_page_that_holds_it(staff_client, cast):
    memory, _ = memory_create(project=cast.project_a)
    with transaction.atomic():
        locked = memory_lock(memory)
        entries_append(
            memory=locked,
            items=[
                {"kind": "message", "role": "user", "content": f"question {i}", "tokens": 7}
                for i in range(1, 46)
            ],
        )
    html = staff_client.get(f"/manage/memories/{memory.pk}/?turn=3").content.decode()
    assert 'id="turn-3"' in html and 'id="turn-45"' not in html
    assert "Turns 1–5 of 45" in html


def test_a_memory_of_ten_thousand_entries_renders_one_page(staff_client, cast):
    memory, _ = memory_create(project=cast.project_a)
    items = []
    for i in range(5000):
        items.append({"kind": "message", "role": "user", "content": f"question {i}", "tokens": 7})
        items.append({"kind": "message", "role": "assistant", "content": f"answer {i}", "tokens": 7})
    with transaction.atomic():
        entries_append(memory=memory_lock(memory), items=items)
    assert Entry.objects.filter(memory=memory).count() == 10_000
    html = staff_client.get(f"/manage/memories/{memory.pk}/").content.decode()
    assert html.count('class="entry"') == 40  # 20 turns of 2 entries
    assert "question 4999" in html and "question 4979" not in html
    assert "page 1 of 250" in html
    older = staff_client.get(f"/manage/memories/{memory.pk}/?tab=timeline&page=250").content.decode()
    assert "question 0<" in older and "question 4999" not in older


def test_facts_can_be_added_edited_and_deleted(staff_client, failed_memory):
    base = f"/manage/memories/{failed_memory.pk}/facts/"
    response = staff_client.post(base, {"text": "Ann likes <em>tea</em>."}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and "Fact added." in response.content.decode()
    assert "&lt;em&gt;tea&lt;/em&gt;" in response.content.decode()
    fact = Fact.objects.get(memory=failed_memory)
    assert fact.extractor == "console"
    response = staff_client.post(f"{base}{fact.pk}/", {"text": "Ann likes coffee."})
    assert response.status_code == 302
    fact.refresh_from_db()
    assert fact.text == "Ann likes coffee."
    response = staff_client.post(f"{base}{fact.pk}/delete/", HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and not Fact.objects.filter(pk=fact.pk).exists()


def test_an_empty_fact_is_refused(staff_client, failed_memory):
    response = staff_client.post(
        f"/manage/memories/{failed_memory.pk}/facts/", {"text": " "}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 400
    assert not Fact.objects.filter(memory=failed_memory).exists()


def test_a_fact_of_another_memory_is_404(staff_client, failed_memory, cast):
    other, _ = memory_create(project=cast.project_b)
    fact, _ = fact_create(memory=other, text="Bob is tall.")
    assert (
        staff_client.post(f"/manage/memories/{failed_memory.pk}/facts/{fact.pk}/", {"text": "x"}).status_code
        == 404
    )
    assert (
        staff_client.post(f"/manage/memories/{failed_memory.pk}/facts/{fact.pk}/delete/").status_code == 404
    )
    assert Fact.objects.filter(pk=fact.pk).exists()


def test_what_the_model_sees_is_a_dry_run(staff_client, failed_memory):
    fact_create(memory=failed_memory, text="Ann lives in Oslo.")
    before = (
        Entry.objects.filter(memory=failed_memory).count(),
        Turn.objects.filter(memory=failed_memory).count(),
    )
    html = staff_client.get(
        f"/manage/memories/{failed_memory.pk}/?tab=model&message=Any+news%3F"
    ).content.decode()
    assert "Ann lives in Oslo." in html
    assert "Task &#x27;weather&#x27; failed" in html  # the committed digest is in the failures block
    assert "java.net.ConnectException" not in html  # the raw error is uncommitted
    assert "Any news?" in html
    after = (
        Entry.objects.filter(memory=failed_memory).count(),
        Turn.objects.filter(memory=failed_memory).count(),
    )
    assert before == after


def test_deleting_a_memory_asks_for_confirmation(staff_client, failed_memory):
    url = f"/manage/memories/{failed_memory.pk}/delete/"
    assert b"Type the memory id" in staff_client.get(url).content
    assert staff_client.post(url, {"confirm": "nope"}).status_code == 400
    assert Memory.objects.filter(pk=failed_memory.pk).exists()
    response = staff_client.post(url, {"confirm": failed_memory.pk}, follow=True)
    assert not Memory.objects.filter(pk=failed_memory.pk).exists()
    assert "deleted" in response.content.decode()
    assert not ErrorDigest.objects.filter(memory_id=failed_memory.pk).exists()


def test_unknown_memory_is_404(staff_client):
    assert staff_client.get("/manage/memories/mem_nope/").status_code == 404
    assert staff_client.get("/manage/memories/mem_nope/delete/").status_code == 404
    assert staff_client.post("/manage/memories/mem_nope/facts/", {"text": "x"}).status_code == 404


def test_overview_counts_and_chart(staff_client, failed_memory):
    html = staff_client.get("/manage/").content.decode()
    assert "<svg" in html and 'class="bar"' in html
    assert "1 ended in error" in html
    assert "Task &#x27;weather&#x27; failed" in html
    assert f"/manage/memories/{failed_memory.pk}/?turn=2#turn-2" in html


def test_digest_ops_page_filters_and_counts(staff_client, failed_memory, cast):
    html = staff_client.get(f"/manage/digests/?project={cast.project_a.pk}&task=weather").content.decode()
    assert "weather · 1" in html and "?turn=2#turn-2" in html
    assert '<thead><tr><th scope="col">Digest</th>' in html  # first, so a phone shows it before scrolling
    html = staff_client.get("/manage/digests/?task=other").content.decode()
    assert "No digests match" in html
    html = staff_client.get("/manage/digests/?since=2000-01-01&until=2000-01-02").content.decode()
    assert "No digests match" in html
    html = staff_client.get("/manage/digests/?error_type=unknown").content.decode()
    assert "weather · 1" in html


def test_digest_ops_page_reports_a_bad_date(staff_client, failed_memory):
    response = staff_client.get("/manage/digests/?since=yesterday")
    assert response.status_code == 200 and b"Check the filters" in response.content


def test_overview_counts_and_lists_failures_stored_without_a_digest(staff_client, cast):
    memory, _ = memory_create(project=cast.project_a)  # default policy: no strict write discipline
    memory_decorate(memory=memory, messages=[{"role": "user", "content": "Hi"}])
    report_accept(
        memory=memory,
        messages=[],
        failures=[
            {
                "task_id": "proxy.openai",
                "error": "HTTP 502 upstream down",
                "output": None,
                "has_output": False,
            }
        ],
    )
    assert not ErrorDigest.objects.filter(memory=memory).exists()
    html = staff_client.get("/manage/").content.decode()
    assert "1 ended in error" in html
    assert "No failures recorded" not in html
    assert "HTTP 502 upstream down" in html and "raw error" in html
    assert f"/manage/memories/{memory.pk}/?turn=1#turn-1" in html


def test_an_empty_digest_chart_has_no_zero_axis(staff_client, cast):
    html = staff_client.get("/manage/").content.decode()
    assert "<svg" not in html and "No digests in the last 14 days" in html


def test_the_digests_task_column_does_not_repeat_a_task_type_equal_to_the_task(staff_client, cast):
    memory, _ = memory_create(project=cast.project_a, policy=POLICY)
    memory_decorate(memory=memory, messages=[{"role": "user", "content": "Hi"}])
    with transaction.atomic():
        failure_record(
            memory=memory_lock(memory),
            turn=1,
            task_id="llm",
            error="boom",
            task_type="llm",
            policy=policy_parse(POLICY),
        )
    html = staff_client.get("/manage/digests/").content.decode()
    row = html[html.index("<tbody>") : html.index("</tbody>")]
    assert "<code>llm</code>" in row and ">llm</div>" not in row


def test_tool_call_arguments_are_shown_as_indented_json_escaped(staff_client, cast):
    memory, _ = memory_create(project=cast.project_a)
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "weather", "arguments": '{"city": "Paris <b>", "days": 3}'},
    }
    with transaction.atomic():
        entries_append(
            memory=memory_lock(memory),
            items=[
                {"kind": "message", "role": "user", "content": "Weather?", "tokens": 3},
                {"kind": "message", "role": "assistant", "content": "", "tool_calls": [call], "tokens": 9},
            ],
        )
    shown = "{\n  &quot;city&quot;: &quot;Paris &lt;b&gt;&quot;,\n  &quot;days&quot;: 3\n}"
    for tab in ("timeline", "model"):
        html = staff_client.get(f"/manage/memories/{memory.pk}/?tab={tab}").content.decode()
        assert f'<pre class="tool-args">{shown}</pre>' in html
        assert "weather" in html and "call_1" in html and '\\"city' not in html
