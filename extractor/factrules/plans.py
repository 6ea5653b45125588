"""Rules that extract the user's plans and trips (a move, a visit, a booked place)."""

from __future__ import annotations

import re

from .fragments import PLACE, PLURALS, RELATIVES, WHEN_WORDS
from .rule import Rule
from .values import plan_fact


def _trip(m):
    if _WISH_AFTER.search(m.string, m.end(), m.end() + 200):
        return None  # "a trip to Paris next month would be nice"
    return not re.fullmatch(rf"(?i:{WHEN_WORDS})", m.group(1).split()[0]) and plan_fact(m)


_WISH_AFTER = re.compile(r"(?i)\b(?:would|could|might|sounds|seems|maybe|perhaps|if|someday|one\s+day)\b")
PLAN_GOING_TO = Rule(
    r"(?i:I'm|I\s+am|we're|we\s+are)\s+(?i:planning|going|heading|flying|travell?ing|off|driving|moving|relocating)\s+"
    r"(?i:to\s+visit|to\s+travel\s+to|to\s+go\s+to|to\s+(?:move|relocate|fly|head|go\s+back)\s+to|to)\s+"
    + PLACE
    + r"(?=$|[\s,.!;])",
    plan_fact,
    0.8,
    slot="plan",
    alone=True,
)
PLAN_TRIP_BOOKED_OR_PLANNED = Rule(
    r"(?i:(?:I|we)\s+(?:just\s+|finally\s+)?(?:booked|planned|have)|(?:I've|we've)\s+(?:just\s+)?(?:booked|planned)|"
    r"(?:I'm|I\s+am|we're|we\s+are)\s+(?:planning|taking|going\s+on))\s+(?i:an?|our|my)\s+"
    r"(?i:(?:\w+\s+)?(?:trip|flight|holiday|vacation|getaway|visit))\s+to\s+" + PLACE + r"(?=$|[\s,.!;])",
    plan_fact,
    0.8,
    slot="plan",
    alone=True,
)
PLAN_STAY_BOOKED = Rule(
    r"(?i:(?:I|we)\s+(?:just\s+|finally\s+)?(?:booked|reserved)|(?:I've|we've)\s+(?:just\s+)?(?:booked|reserved))\s+"
    r"(?i:an?|two|three|four|five|our|my|a\s+few)\s+(?:\w+\s+)?(?i:week|weekend|days|nights|night|room|hotel|cabin|cottage|villa|"
    r"apartment|flat|airbnb|place|chalet|campsite|hostel)\s+(?i:in)\s+" + PLACE + r"(?=$|[\s,.!;])",
    plan_fact,
    0.75,
    slot="plan",
    alone=True,
)
PLAN_LEAVING_FOR = Rule(
    r"(?i:I|we)\s+(?i:leave|fly|head|set\s+off|depart)\s+for\s+" + PLACE + r"(?=$|[\s,.!;])",
    plan_fact,
    0.75,
    slot="plan",
    alone=True,
)
PLAN_VISITING = Rule(
    r"(?i:I'm|I\s+am|we're|we\s+are)\s+(?i:visiting)\s+" + PLACE + r"(?=$|[\s,.!;])",
    plan_fact,
    0.75,
    slot="plan",
    alone=True,
)
PLAN_HOLIDAY_OR_BACK_TO = Rule(
    r"(?i:I'm|I\s+am|we're|we\s+are)\s+(?i:going|off|heading)\s+(?i:on\s+(?:a\s+|our\s+|my\s+)?(?:holiday|vacation|trip|honeymoon|"
    r"road\s+trip|work\s+trip|business\s+trip|city\s+break)|back)\s+(?i:to)\s+" + PLACE + r"(?=$|[\s,.!;])",
    plan_fact,
    0.8,
    slot="plan",
    alone=True,
)
PLAN_EVENT_IN = Rule(
    r"(?i:I\s+have|I've\s+got|we\s+have|we've\s+got)\s+(?i:an?|my|our)\s+(?:\w+\s+)?(?i:conference|wedding|trip|holiday|"
    r"vacation|meeting|work\s+trip|business\s+trip|interview|gig|concert)\s+(?i:in)\s+"
    + PLACE
    + r"(?=$|[\s,.!;])(?!\s+(?i:last|yesterday))",
    plan_fact,
    0.75,
    slot="plan",
    alone=True,
)
PLAN_WILL_BE_GOING_TO = Rule(
    r"(?i:I'll\s+be|I\s+will\s+be|we'll\s+be|we\s+will\s+be)\s+(?i:travell?ing|flying|going|heading|driving|moving)\s+"
    r"(?i:to)\s+" + PLACE + r"(?=$|[\s,.!;])",
    plan_fact,
    0.8,
    slot="plan",
    alone=True,
)
PLAN_SPENDING_SEASON_IN = Rule(
    r"(?i:I'm|I\s+am|we're|we\s+are)\s+(?i:spending)\s+(?i:(?:the\s+|my\s+|our\s+)?(?:christmas|easter|new\s+year|summer|winter|"
    r"holidays|weekend|week|month|spring|autumn|fall|vacation|honeymoon|birthday))\s+(?i:in)\s+"
    + PLACE
    + r"(?=$|[\s,.!;])",
    plan_fact,
    0.8,
    slot="plan",
    alone=True,
)
PLAN_MY_JOURNEY_LEAVES = Rule(
    r"(?i:my|our)\s+(?i:flight|train|trip|bus|ferry|drive)\s+(?i:to)\s+"
    + PLACE
    + r"\s+(?i:is|leaves|departs|goes)\s+(?i:on|at|in|tomorrow|today|tonight|next|this|early|late|\d)",
    plan_fact,
    0.8,
    slot="plan",
    alone=True,
)
PLAN_INTEND_TO_VISIT = Rule(
    r"(?i:I\s+(?:plan|intend|want)\s+to\s+visit|(?:I|we)'ll\s+be\s+(?:visiting|in)|(?:I|we)\s+will\s+be\s+(?:visiting|in))\s+"
    + PLACE
    + r"(?=$|[\s,.!;])",
    plan_fact,
    0.8,
    slot="plan",
    alone=True,
)
PLAN_SEEING_PEOPLE_IN = Rule(
    r"(?:(?i:I'm|I\s+am|we're|we\s+are)\s+)?(?i:visiting|seeing)\s+(?:(?i:my|our)\s+)?(?:[\w\-]+\s+){0,2}?(?i:parents|family|friends|relatives|"
    r"folks|mates|grandparents|in-laws|kids|"
    + RELATIVES
    + r"|"
    + PLURALS
    + r")\s+(?i:in)\s+"
    + PLACE
    + r"(?=$|[\s,.!;])",
    plan_fact,
    0.75,
    slot="plan",
    alone=True,
)
PLAN_TICKETS_TO = Rule(
    r"(?:(?i:I|we)(?:'ve|\s+have)?\s+)?(?:(?i:just|finally)\s+)?(?i:booked|bought|got)\s+(?:(?i:an?|our|my|the|two|some|cheap|return|"
    r"last-minute)\s+)?(?:[\w\-]+\s+)?(?i:flights?|tickets?|trains?|ferry|coach|bus)\s+(?i:to|for)\s+"
    + PLACE
    + r"(?=$|[\s,.!;])",
    plan_fact,
    0.75,
    slot="plan",
    alone=True,
)
PLAN_GO_TO_WITH_WHEN = Rule(
    r"(?i:I|we)\s+(?i:move|relocate|fly|head|leave|go)\s+(?:(?i:back)\s+)?(?i:to|for)\s+"
    + PLACE
    + r"(?=\s+(?i:in|on|next|this|at|tomorrow|soon|early|late|after)\b)",
    plan_fact,
    0.75,
    slot="plan",
    alone=True,
)
PLAN_WHEN_FIRST = Rule(
    r"(?i:next\s+(?:week|month|year|spring|summer|autumn|fall|winter|weekend)|this\s+(?:weekend|summer|winter|spring|autumn|fall)|"
    r"tomorrow|on\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|in\s+(?:"
    + WHEN_WORDS
    + r"))[,]?\s+"
    r"(?i:I|we)\s+(?i:fly|travel|head|go|leave|drive|move|relocate)\s+(?i:to|for)\s+"
    + PLACE
    + r"(?=$|[\s,.!;])",
    plan_fact,
    0.75,
    slot="plan",
    alone=True,
)
# Trips planned: "we're doing a road trip around the Faroe Islands in June", "I'm taking my mum to Halong Bay
# for her 60th".
TRIP_TAKING_OR_DOING = Rule(
    r"(?i:I'm|I\s+am|we're|we\s+are)\s+(?i:doing|taking|planning|going\s+on|off\s+on)\s+(?i:a|an|our|my|the)\s+(?:[\w\-]+\s+){0,2}?"
    r"(?i:trip|road\s+trip|roadtrip|tour|holiday|honeymoon|vacation|cruise|trek|hike|pilgrimage|safari|getaway|break)\s+"
    r"(?i:to|around|through|across|in|of|round)\s+(?:(?i:the)\s+)?" + PLACE + r"(?=$|[\s,.!;])",
    _trip,
    0.75,
    slot="plan",
    alone=True,
)
TRIP_TAKING_SOMEONE_TO = Rule(
    r"(?i:I'm|I\s+am|we're|we\s+are)\s+(?i:taking)\s+(?i:my|our|the)\s+(?:[\w\-]+\s+){0,2}?(?i:to)\s+(?:(?i:the)\s+)?"
    + PLACE
    + r"(?=\s+(?i:for|in|next|this|on|over)\b)",
    _trip,
    0.7,
    slot="plan",
    alone=True,
)
# "trip to Sardinia next month with the girls", "booked Zakopane for Easter": a plan without "I'm going".
TRIP_WITHOUT_VERB = Rule(
    r"(?:(?i:a|our|my|the)\s+)?(?:(?i:big|little|quick|girls'?|family|road|work|solo)\s+)?(?i:trip|holiday|vacation|getaway|honeymoon|"
    r"weekend\s+away|city\s+break)\s+(?i:to)\s+"
    + PLACE
    + r"(?=\s+(?i:next|this|in|on|for|over|at\s+the\s+end)\s)",
    _trip,
    0.7,
    slot="plan",
    alone=True,
)
TRIP_BOOKED = Rule(
    r"(?:(?i:I|we)(?:'ve|\s+have)?\s+)?(?:(?i:just|finally)\s+)?(?i:booked)\s+(?:(?i:a\s+trip\s+to|flights\s+to|tickets\s+to|"
    r"a\s+week\s+in|a\s+weekend\s+in|two\s+weeks\s+in|a\s+holiday\s+in|a\s+cabin\s+in|a\s+flat\s+in|an\s+airbnb\s+in)\s+)?"
    # "booked the Hotel Adler in Innsbruck": "the …" booked is a venue or a thing, not where one goes.
    + r"(?!(?i:the)\s)"
    + PLACE
    + r"(?=\s+(?i:for|in|next|this|over|from)\s)",
    _trip,
    0.7,
    slot="plan",
    alone=True,
)
