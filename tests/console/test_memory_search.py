"""The search box of a memory's page: the API's search over every thread, each hit linked to its
message in the timeline, the query kept in the URL and escaped."""

from __future__ import annotations

import pytest

from common.messages import validate_messages
from memories.models import Entry, Outbox
from memories.services import memory_create, memory_decorate, messages_import, outbox_process


@pytest.fixture
def searchable(cast):
    """A memory of project A with a message about a beagle in the thread `pets`."""
    memory, _ = memory_create(project=cast.project_a, external_id="sam")
    memory_decorate(memory=memory, messages=[{"role": "user", "content": "What is the weather today?"}])
    messages_import(
        memory=memory,
        thread="pets",
        raw_messages=[
            {"role": "user", "content": "I have a beagle called Biscuit <3"},
            {"role": "assistant", "content": "Biscuit is a lovely name."},
        ],
        validate=validate_messages,
    )
    for row in Outbox.objects.filter(memory=memory, processed_at=None):
        outbox_process(outbox_id=row.id)  # what the worker does: index the messages for search
    return memory


def test_a_search_lists_matching_messages_linked_to_their_place_in_the_timeline(staff_client, searchable):
    base = f"/manage/memories/{searchable.pk}/"
    html = staff_client.get(base, {"tab": "search", "q": "beagle"}).content.decode()
    said = Entry.objects.get(memory=searchable, content__startswith="I have a beagle")
    link = f"{base}?tab=timeline&amp;thread=pets&amp;turn={said.turn}#entry-{said.seq}"
    assert f'<a href="{link}">message #{said.seq}</a>' in html
    results = html[html.index('id="search-results"') :]
    assert results.index("I have a beagle called Biscuit &lt;3") < results.index("</li>")  # the best first
    html = staff_client.get(link.replace("&amp;", "&").split("#")[0]).content.decode()
    assert f'id="entry-{said.seq}"' in html


def test_the_query_stays_in_the_box_escaped_and_no_match_says_so(staff_client, searchable):
    base = f"/manage/memories/{searchable.pk}/"
    html = staff_client.get(base, {"tab": "search", "q": '"><script>x()</script> zebra'}).content.decode()
    assert 'value="&quot;&gt;&lt;script&gt;x()&lt;/script&gt; zebra"' in html and "<script>x()" not in html
    assert "No message matches" in html
    response = staff_client.get(base, {"tab": "search", "q": "beagle"}, HTTP_HX_REQUEST="true")
    assert response.content.decode().lstrip().startswith('<div id="tab">') and b"Biscuit" in response.content
