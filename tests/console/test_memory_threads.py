"""A memory's threads in the console: the Threads tab, the timeline of the thread named in the URL,
and facts naming the message they were learned from (thread, turn, seq, date) as timeline links."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from common.messages import validate_messages
from memories.models import Entry, Fact, Outbox, Thread
from memories.services import fact_create, memory_create, memory_decorate, messages_import, outbox_process

TRIP = [
    {"role": "user", "content": "Hi, I'm Dana. I live in Lisbon.", "created_at": "2025-03-01T09:30:00+00:00"},
    {"role": "assistant", "content": "Hello Dana!", "created_at": "2025-03-01T09:31:00+00:00"},
]


def history(memory, thread: str | None, messages: list[dict]) -> None:
    messages_import(
        memory=memory, thread=thread, raw_messages=[dict(m) for m in messages], validate=validate_messages
    )


@pytest.fixture
def threaded(cast):
    """A memory of project A: one turn in its default thread (now), the thread `trip` (March 2025)
    and a thread whose name is markup with an ampersand (April 2025)."""
    memory, _ = memory_create(project=cast.project_a, external_id="dana")
    memory_decorate(memory=memory, messages=[{"role": "user", "content": "Default thread question"}])
    history(memory, "trip", TRIP)
    history(
        memory,
        "<b>a&b</b>",
        [{"role": "user", "content": "Markup thread message", "created_at": "2025-04-02T10:00:00+00:00"}],
    )
    memory.refresh_from_db()
    return memory


def names_in(html: str) -> list[str]:
    """The thread names of the Threads tab's rows, in order (as their links carry them)."""
    table = html[html.index('aria-label="Threads table"') :]
    return re.findall(r"<td><a href=\"[^\"]*\"><code>([^<]*)</code>", table)


def test_the_threads_tab_lists_each_thread_with_its_counts_newest_activity_first(staff_client, threaded):
    html = staff_client.get(f"/manage/memories/{threaded.pk}/?tab=threads").content.decode()
    assert "Threads (3)" in html and "in 3 threads" in html
    assert names_in(html) == ["default", "&lt;b&gt;a&amp;b&lt;/b&gt;", "trip"]
    assert "<b>a&b</b>" not in html
    row = html[html.index("<code>trip</code>") :]
    assert re.search(r'<td class="num">1</td>\s*<td class="num">2</td>', row)  # 1 turn, 2 messages
    assert "2025-03-01 09:31" in row  # its last activity: its newest message's time
    assert f'href="/manage/memories/{threaded.pk}/?tab=timeline&amp;thread=%3Cb%3Ea%26b%3C%2Fb%3E"' in html


def test_the_threads_tab_pages_through_every_thread_placing_the_default_one_by_its_activity(
    staff_client, cast
):
    memory, _ = memory_create(project=cast.project_a)
    now = timezone.now()
    Thread.objects.bulk_create(
        Thread(memory=memory, name=f"t{i:02d}", last_turn=1, updated_at=now - timedelta(hours=i))
        for i in range(30)
    )
    said = (now - timedelta(hours=12, minutes=30)).isoformat()
    history(memory, None, [{"role": "user", "content": "An old default message", "created_at": said}])
    expected = [f"t{i:02d}" for i in range(13)] + ["default"] + [f"t{i:02d}" for i in range(13, 30)]
    url = f"/manage/memories/{memory.pk}/?tab=threads"
    first, second = (staff_client.get(f"{url}&page={n}").content.decode() for n in (1, 2))
    assert names_in(first) + names_in(second) == expected
    assert "Page 1 of 2 · 31 in total" in first and 'href="?tab=threads&amp;page=2"' in first


def test_the_timeline_shows_the_thread_named_in_the_url_and_keeps_it_in_its_links(staff_client, threaded):
    base = f"/manage/memories/{threaded.pk}/"
    html = staff_client.get(base).content.decode()
    assert "Default thread question" in html and "I live in Lisbon" not in html
    assert '<option value="default" selected>' in html and '<option value="trip"' in html
    assert '<option value="&lt;b&gt;a&amp;b&lt;/b&gt;"' in html

    html = staff_client.get(base + "?tab=timeline&thread=trip&order=oldest").content.decode()
    assert "I live in Lisbon" in html and "Default thread question" not in html
    assert '<option value="trip" selected>' in html
    assert "Turns 1–1 of 1 in thread <strong>trip</strong>" in html
    assert 'href="?tab=timeline&amp;thread=trip"' not in html  # links name the page, not just a query
    assert f'href="{base}?tab=timeline&amp;thread=trip"' in html  # "Show newest first" keeps the thread
    assert '<input type="hidden" name="order" value="oldest">' in html  # the filter keeps the order
    assert "2025-03-01 09:30" in html  # each entry shows when it was said

    html = staff_client.get(base + "?tab=timeline&thread=%3Cb%3Ea%26b%3C%2Fb%3E").content.decode()
    assert "Markup thread message" in html and "<b>a&b</b>" not in html

    html = staff_client.get(base + "?tab=timeline&thread=nope").content.decode()
    assert "This memory has no thread “nope”" in html and "Default thread question" not in html
    html = staff_client.get(base + "?tab=timeline&thread=a%00b").content.decode()  # no thread id
    assert "Default thread question" in html


def test_what_the_model_sees_is_built_in_the_thread_named_in_the_url(staff_client, threaded):
    before = Entry.objects.filter(memory=threaded).count()
    html = staff_client.get(f"/manage/memories/{threaded.pk}/?tab=model&thread=trip").content.decode()
    assert "I live in Lisbon" in html and "Default thread question" not in html
    assert '<input type="hidden" name="thread" value="trip">' in html
    assert Entry.objects.filter(memory=threaded).count() == before


def test_a_fact_links_to_the_message_it_was_learned_from_with_its_thread_and_date(staff_client, threaded):
    for row in Outbox.objects.filter(memory=threaded, processed_at=None):
        outbox_process(outbox_id=row.id)
    fact = Fact.objects.get(memory=threaded, text="User lives in Lisbon")
    source = Entry.objects.get(pk=fact.source_entry_ids[0])
    assert source.thread == "trip"
    gone, _ = fact_create(memory=threaded, text="Has a cat")
    Fact.objects.filter(pk=gone.pk).update(source_entry_ids=[987654])

    base = f"/manage/memories/{threaded.pk}/"
    html = staff_client.get(base + "?tab=facts").content.decode()
    link = f"{base}?tab=timeline&amp;thread=trip&amp;turn={source.turn}#entry-{source.seq}"
    assert f'<a href="{link}">message #{source.seq}</a> (thread <code>trip</code>, turn {source.turn}' in html
    assert '<time datetime="2025-03-01T09:30:00+00:00">2025-03-01</time>' in html
    assert "from entries" not in html
    assert "1 message no longer stored" in html

    html = staff_client.get(link.replace("&amp;", "&").split("#")[0]).content.decode()
    assert f'id="entry-{source.seq}"' in html and '<option value="trip" selected>' in html
