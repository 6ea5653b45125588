"""Generate tests/data/recall_corpus.json: a deterministic, varied corpus for recall and facts.

    python tests/data/make_recall_corpus.py   # rewrites recall_corpus.json (same seed, same file)

Conversations in five styles (assistant chats, support tickets, two-person chats, long
multi-session ones, chats with non-English names), each with questions whose answer lies far
back (`expect` = a string the right message contains), and user lines labelled with the facts a
careful human would extract (slot + words the fact must contain; [] = nothing to extract).

Held out: the `heldout` half has its own templates (HELDOUT_*), written before it was first
measured and never tuned on: questions paraphrased so they share few words with the evidence
("What's my dog called?" for "I have a beagle, Biscuit."), distractor turns that mention the same
entities, answers said early in long conversations, corrections where only the newest statement
holds the answer, and fact phrasings the extractor was not written for. The `dev` half (tuned on)
is written in the same style (DEV_NEEDLES, DEV_SUPPORT, DEV_TWO), from template
families, filler lines and pools of its own (DEV_POOLS), so nothing tuned on dev is fitted to the
held-out wording; its fact lines (FACT_TEMPLATES + DEV_FACTS) are as before. Editing the dev side
never moves a held-out conversation: each conversation has its own generator, and the held-out
half's draws are unchanged (check: its conversations in the JSON stay byte-identical).
"""

from __future__ import annotations

import json
import random
from datetime import date, timedelta
from pathlib import Path

SEED = 1313
OUT = Path(__file__).with_name("recall_corpus.json")

NAMES = [
    "Zoë",
    "José",
    "Łukasz",
    "Dana",
    "Priya",
    "Søren",
    "Ana",
    "Björn",
    "Mei",
    "Tomás",
    "Aoife",
    "Kwame",
    "Ingrid",
    "Dmitri",
    "Fatima",
    "Hiroshi",
    "Chloé",
    "Mateus",
    "Olu",
    "Renée",
    "Jürgen",
    "Nuala",
    "Emeka",
    "Saoirse",
    "Lars",
    "Yusuf",
    "Élodie",
    "Rafael",
    "Ximena",
    "Anneliese",
    "Bartłomiej",
    "Oskar",
    "Amara",
]
CITIES = [
    "Kraków",
    "Lisbon",
    "Malmö",
    "São Paulo",
    "Zürich",
    "Reykjavík",
    "Bergen",
    "Porto",
    "Tallinn",
    "Gdańsk",
    "Nairobi",
    "Osaka",
    "Ljubljana",
    "Córdoba",
    "Valparaíso",
    "Tromsø",
    "Dublin",
    "Leeds",
    "Montréal",
    "Hanoi",
]
JOBS = [
    "nurse",
    "software engineer",
    "architect",
    "pharmacist",
    "teacher",
    "data analyst",
    "chef",
    "translator",
    "electrician",
    "physiotherapist",
    "graphic designer",
    "accountant",
]
EMPLOYERS = [
    "Siemens",
    "Nordea",
    "Spotify",
    "Novo Nordisk",
    "Zalando",
    "Rakuten",
    "Banco Itaú",
    "Allegro",
    "Ørsted",
]
PETS = [
    ("dog", "beagle"),
    ("cat", "tabby"),
    ("dog", "corgi"),
    ("cat", "Maine Coon"),
    ("rabbit", "lop"),
    ("dog", "greyhound"),
]
PET_NAMES = ["Biscuit", "Pierogi", "Mochi", "Fjord", "Luna", "Tofu", "Kiwi", "Pimenta", "Søl", "Boris"]
FOODS = ["sushi", "pierogi", "falafel", "ramen", "tapas", "dumplings", "curry", "paella"]
THINGS = ["climbing", "jazz", "board games", "sailing", "pottery", "chess", "cycling", "gardening", "opera"]
RELATIVES = ["sister", "brother", "daughter", "son", "mother", "father", "cousin"]
# The slot a relative's fact takes: one mother and one father, any number of the others.
RELATIVE_SLOTS = {"mother": "family:mother", "father": "family:father"}
ITEMS = ["kettle", "monitor", "headphones", "blender", "desk lamp", "router", "backpack", "keyboard"]

FILLER_USER = [
    "Can you help me draft an email to my team about the {topic}?",
    "What's a good way to learn more about {topic}?",
    "I had a long day, the {topic} meeting ran over.",
    "Give me three ideas for the weekend.",
    "How do I convert {n} miles to kilometres?",
    "Summarise the pros and cons of {topic}.",
    "My flight last year was delayed for hours, never again with that airline.",
    "Any tips for sleeping better?",
    "What should I cook tonight with rice and beans?",
    "Explain {topic} like I'm twelve.",
    "The weather in {city} looks grim this week.",
    "I need a packing list for a short trip.",
    "Remind me how compound interest works.",
    "Is it worth buying a new laptop this year?",
    "We talked about the garage and the airport last time, but that's sorted.",
    "Write a short poem about {topic}.",
    "What's the difference between a loan and a lease?",
    "My {relative} called, we chatted about {topic} for ages.",
    "How long should I boil an egg?",
]
FILLER_ASSISTANT = [
    "Sure, here is a draft you can adapt.",
    "Good question: it depends on your goals, but here are some options.",
    "That sounds exhausting; take it easy tonight.",
    "Here are three ideas: a walk, a museum, a picnic.",
    "About {n} times 1.609 kilometres.",
    "Pros: flexibility. Cons: cost and time.",
    "Sorry to hear that!",
    "Keep a regular schedule and avoid screens before bed.",
    "Try a rice and bean bowl with lime and coriander.",
    "Imagine it as a recipe with steps.",
    "Pack layers and an umbrella.",
    "Interest earns interest over time.",
    "If your laptop still works, maybe wait.",
    "Glad that's sorted!",
    "Here is a short poem.",
    "A lease is renting, a loan is borrowing to buy.",
    "That's lovely.",
    "About seven minutes for a firm yolk.",
]
SUPPORT_FILLER_USER = [
    "Hi, I have another question about my account.",
    "Is there a way to export reports as PDF?",
    "The dashboard is slow this morning.",
    "Can I add a second admin?",
    "How do I reset two-factor authentication?",
    "Thanks, that worked.",
    "Where do I find the invoices?",
    "Can you escalate this to engineering?",
    "We also have an issue with the order history page loading slowly.",
]
SUPPORT_FILLER_AGENT = [
    "Thanks for reaching out! Let me check that for you.",
    "You can export from Settings → Reports.",
    "We're looking into the performance issue.",
    "Yes, under Team → Roles.",
    "I've sent you a reset link.",
    "Happy to help!",
    "Invoices are under Billing.",
    "I've escalated this ticket to our engineers.",
    "Our team is aware of slow order pages; an update is coming.",
]
TOPICS = [
    "budgets",
    "gardening",
    "quantum computing",
    "the quarterly review",
    "photosynthesis",
    "jazz history",
    "remote work",
    "the Roman empire",
    "machine learning",
    "recycling rules",
]
RESTOS = ["Trattoria Bellini", "Casa Lúcia", "Smørrebrød Hus", "Le Petit Zinc", "Sakura Tei", "Bar Łąka"]
BOOKS = ["Solaris", "The Master and Margarita", "Pedro Páramo", "Kristin Lavransdatter", "Norwegian Wood"]
PLACES = ["Ørnes", "Kinderdijk", "Glendalough", "Mirador del Río", "Łazienki Park", "the old mill"]
MEDS = ["amlodipine", "lisinopril", "losartan"]
COLORS = ["sage green", "dusty rose", "ochre yellow", "pale lilac"]
TITLES = ["Queues that forget nothing", "Small models, big caches", "Why retries lie"]
SCREENS = ["settings", "calendar", "reports", "profile"]
PLANS = ["Team", "Business", "Starter"]
DAYS = ["March 3", "June 12", "14 August", "November 29", "2 May", "October 7", "21 January"]
WORDS = ["pinecone", "fjordlight", "kaszanka", "marmelo", "tundra", "brisa", "koala"]
BANDS = ["Sigur Rós", "Mötley Crüe", "Björk", "Röyksopp", "Los Tigres del Norte"]

# --- fact lines: (text, [(slot, [must words])]) ------------------------------------------------------

FACT_TEMPLATES = [
    ("Hi, I'm {name}.", [("name", ["{lname}"])]),
    ("Call me {name}, everyone does.", [("name", ["{lname}"])]),
    ("My name is {name} and I live in {city}.", [("name", ["{lname}"]), ("location", ["{lcity}"])]),
    ("I'm {name}, nice to meet you.", [("name", ["{lname}"])]),
    ("I live in {city}.", [("location", ["{lcity}"])]),
    ("Actually, I moved to {city} last spring.", [("location", ["{lcity}"])]),
    ("I'm originally from {city}.", [("origin", ["{lcity}"])]),
    ("I grew up in {city} but I live in {city2} now.", [("origin", ["{lcity}"]), ("location", ["{lcity2}"])]),
    ("I work as a {job}.", [("job", ["{job}"])]),
    ("I'm a {job} at {employer}.", [("job", ["{job}"]), ("employer", ["{lemployer}"])]),
    ("I work at {employer}.", [("employer", ["{lemployer}"])]),
    ("I just started a new job at {employer}.", [("employer", ["{lemployer}"])]),
    ("I have a {kind} named {pet}.", [("pet:{lpet}", ["{lpet}"])]),
    ("We adopted a {kind} called {pet} last week.", [("pet:{lpet}", ["{lpet}"])]),
    ("My {kind}'s name is {pet}.", [("pet:{lpet}", ["{lpet}"])]),
    ("I love {thing}.", [("preference:{kthing}", ["likes", "{thing}"])]),
    ("I really enjoy {thing} on weekends.", [("preference:{kthing}", ["likes", "{thing}"])]),
    ("I hate {food}.", [("preference:{kfood}", ["dislikes", "{food}"])]),
    ("I'm allergic to shellfish.", [("allergy:shellfish", ["shellfish"])]),
    ("My {relative} {name2} lives in {city}.", [("{relslot}", ["{lname2}"])]),
    ("I have a {relative} called {name2}.", [("{relslot}", ["{lname2}"])]),
    ("My {relative}'s name is {name2}.", [("{relslot}", ["{lname2}"])]),
    ("I'm planning to visit {city} in {month}.", [("plan:{lcity}", ["{lcity}"])]),
    ("I'm going to {city} next month.", [("plan:{lcity}", ["{lcity}"])]),
    ("My favourite food is {food}.", [("favorite:food", ["{food}"])]),
    ("I'm {age} years old.", [("age", ["{age}"])]),
    ("I prefer tea over coffee.", [("preference:tea", ["tea"])]),
    ("I'm vegetarian.", [("diet", ["vegetarian"])]),
    ("I'm married to {name2}.", [("family:spouse", ["{lname2}"])]),
    ("My wife is {name2}.", [("family:spouse", ["{lname2}"])]),
    ("My husband {name2} is a {job}.", [("family:spouse", ["{lname2}"])]),
    (
        "Oh, and I just moved to {city}. I work as a {job} there.",
        [("location", ["{lcity}"]), ("job", ["{job}"])],
    ),
]
NEGATIVE_TEMPLATES = [
    "My friend {name} lives in {city}.",
    "If I lived in {city} I would cycle everywhere.",
    "I don't live in {city} anymore.",
    "My sister says I should move to {city}.",
    "Pretend I'm a pirate called {name}.",
    "Do you think I'd like {city}?",
    "I used to live in {city}.",
    'He said "I live in {city}" and left.',
    "Maybe I'll move to {city} someday.",
    "I'm not a {job}.",
    "Would I enjoy {thing}?",
    "I'm not allergic to anything.",
    "Write a story where I live in {city}.",
    "My colleague {name} works at {employer}.",
    "I'm not sure about {city}.",
    "I might adopt a {kind} one day.",
    "Imagine I have a {kind} called {pet}.",
    "I'm tired.",
    "I'm sorry, I meant {city}.",
    "I'm fine, thanks.",
    "Tell {name} I said hi.",
    "I'm looking for a {job} in {city}.",
    "I never liked {food}.",
    "Is {name} a good name for a {kind}?",
    "I'm so happy today.",
    "My boss {name} is from {city}.",
]

# --- the held-out half: written before any measuring, in phrasings the code was not written for ------
# A needle here is (statements in the order said, question, expect, distractors). Questions are
# paraphrased so they share few words with the evidence; distractors mention the same entities
# without the answer and come after the statement; when there are two statements the second is a
# correction and `expect` is in the newest one only.

HELDOUT_NEEDLES = [
    (
        ["I have a {breed}, {pet}."],
        "What's my {kind} called?",
        "{pet}",
        ["The {kind} sitter cancelled again, so annoying.", "Do {breed}s need a lot of exercise?"],
    ),
    (
        ["We're flying out of gate {gate} for {city}."],
        "Where do we board on Friday?",
        "{gate}",
        ["I looked at hotels in {city}, all pricey.", "The {city} trip budget is tight this year."],
    ),
    (
        ["The cabin wifi is {word}-{n}.", "Update: they changed the cabin wifi, it's {word2}-{n2} now."],
        "What do I type to get online up at the cabin?",
        "{word2}-{n2}",
        ["The cabin has no phone signal at all."],
    ),
    (
        ["{name} borrowed my paperback of {book}."],
        "Who's got that novel of mine?",
        "{name}",
        ["I'm rereading {book} for the third time, in my head at least."],
    ),
    (
        ["The kids' recital got pushed to {day}."],
        "When do the children perform?",
        "{day}",
        ["The recital costumes are still not finished."],
    ),
    (
        ["My dentist is on {day}.", "Dentist moved again, now it's {day2} at {hour}."],
        "When do I see the tooth doctor?",
        "{hour}",
        ["I really need to floss more before the dentist sees me."],
    ),
    (
        ["Note for later: the boiler needs part {code}."],
        "What did the heating guy say I need to order?",
        "{code}",
        ["The boiler is making that knocking noise again.", "The plumber is coming on Tuesday."],
    ),
    (
        ["I take {med} each morning now."],
        "Which pill do I have with breakfast?",
        "{med}",
        ["My blood pressure was fine at the last checkup."],
    ),
    (
        ["The rent goes to {name} by the {n}th."],
        "Who do I pay for the flat, and by when?",
        "{n}th",
        ["The rent went up again this year."],
    ),
    (
        ["We went with {color} for the baby's room."],
        "What shade is the nursery?",
        "{color}",
        ["The nursery furniture arrives on Friday."],
    ),
    (
        ["My talk at the conference will be called '{title}'."],
        "Remind me what I named my presentation.",
        "{title}",
        ["The conference has three tracks this year."],
    ),
    (
        ["Table for the anniversary is at {resto}, 8 pm."],
        "Where are we eating to celebrate?",
        "{resto}",
        ["Our anniversary is the same week as the conference, oddly."],
    ),
]
HELDOUT_SUPPORT = [
    (
        ["The replacement ships under {code}."],
        "How can I follow the parcel?",
        "{code}",
        ["The replacement should arrive this week, right?"],
    ),
    (
        ["Since the update, exporting spreadsheets throws {code}."],
        "What does the export error say?",
        "{code}",
        ["Exports are really important for our month-end."],
    ),
    (
        ["We have {n} seats on {plan}.", "We upgraded, it's {n2} seats now."],
        "How big is our licence now?",
        "{n2} seats",
        ["Do seats renew monthly or yearly?"],
    ),
    (
        ["Parcel {order} came with the {item} smashed."],
        "What was damaged in my delivery?",
        "{item}",
        ["I'd like to keep parcel {order} if the rest is fine."],
    ),
    (
        ["{name} is the one with admin rights on our workspace."],
        "Who can change our settings?",
        "{name}",
        ["Our workspace has grown a lot this year."],
    ),
]
HELDOUT_TWO = [
    (
        ["I'll see Dr. {name} at {place} on {day}."],
        "Where's the appointment with the doctor?",
        "{place}",
        ["Dr. {name} is always running late."],
    ),
    (["New number: {phone}."], "How do I reach you these days?", "{phone}", ["My old phone finally died."]),
    (
        ["For book club I went with {book}."],
        "What are we reading this month?",
        "{book}",
        ["Book club is at my place this time."],
    ),
    (
        ["Signed up! {city} half marathon, here I come."],
        "Which race are you running?",
        "{city}",
        ["My knees are not ready for any race."],
    ),
    (
        ["Grandma's cake takes {n} eggs, no more."],
        "How many eggs go in grandma's cake?",
        "{n} eggs",
        ["Grandma's cake was the hit of the party."],
    ),
]

HELDOUT_FACTS = [
    ("Name's {name}.", [("name", ["{lname}"])]),
    ("You can call me {name}.", [("name", ["{lname}"])]),
    ("Everyone calls me {name}.", [("name", ["{lname}"])]),
    ("These days I'm living in {city}.", [("location", ["{lcity}"])]),
    ("Actually, we relocated to {city} in {month}.", [("location", ["{lcity}"])]),
    ("Correction: I live in {city} now, not {city2}.", [("location", ["{lcity}"])]),
    ("I'm based out of {city}.", [("location", ["{lcity}"])]),
    ("I was raised in {city}.", [("origin", ["{lcity}"])]),
    ("Born in {city}, living in {city2}.", [("origin", ["{lcity}"]), ("location", ["{lcity2}"])]),
    ("I'm {ajob} by trade.", [("job", ["{job}"])]),
    ("I've been working as {ajob} for ten years.", [("job", ["{job}"])]),
    ("By profession I'm {ajob}.", [("job", ["{job}"])]),
    ("I've worked at {employer} since 2019.", [("employer", ["{lemployer}"])]),
    ("I'm currently employed by {employer}.", [("employer", ["{lemployer}"])]),
    ("I got a job at {employer}!", [("employer", ["{lemployer}"])]),
    ("My {relative} is called {name2}.", [("{relslot}", ["{lname2}"])]),
    ("My {relative}, {name2}, just turned forty.", [("{relslot}", ["{lname2}"])]),
    ("We got a {kind} named {pet}.", [("pet:{lpet}", ["{lpet}"])]),
    ("Our {kind}, {pet}, is three now.", [("pet:{lpet}", ["{lpet}"])]),
    ("I adopted a rescue {kind} called {pet}.", [("pet:{lpet}", ["{lpet}"])]),
    ("I'm crazy about {thing}.", [("preference:{kthing}", ["likes", "{thing}"])]),
    ("I'm obsessed with {thing}.", [("preference:{kthing}", ["likes", "{thing}"])]),
    ("I can't stand {food}.", [("preference:{kfood}", ["dislikes", "{food}"])]),
    ("I'm not a big fan of {food}.", [("preference:{kfood}", ["dislikes", "{food}"])]),
    ("I'm flying to {city} on Friday.", [("plan:{lcity}", ["{lcity}"])]),
    ("Next month I'm off to {city}.", [("plan:{lcity}", ["{lcity}"])]),
    ("We're heading to {city} for the holidays.", [("plan:{lcity}", ["{lcity}"])]),
    ("I have a nut allergy.", [("allergy:nut", ["nut"])]),
    ("I turned {age} last week.", [("age", ["{age}"])]),
    (
        "I'm {name}. I work for {employer} and live in {city}.",
        [("name", ["{lname}"]), ("employer", ["{lemployer}"]), ("location", ["{lcity}"])],
    ),
    (
        "Just so you know, my wife {name2} and I adopted a {kind} named {pet}.",
        [("family:spouse", ["{lname2}"]), ("pet:{lpet}", ["{lpet}"])],
    ),
    ("My favourite band is {band}.", [("favorite:band", ["{lband}"])]),
]
HELDOUT_NEGATIVES = [
    "My neighbour {name} just moved to {city}.",
    "I'd love to live in {city} one day.",
    "What if I moved to {city}?",
    "I wish I had a {kind}.",
    "I'm not from {city}, I just visit often.",
    "My brother works at {employer}, not me.",
    "Translate 'I live in {city}' into French.",
    "I never worked at {employer}.",
    "I'm not going to {city} after all.",
    "{name} loves {thing}.",
    "Suppose I adopted a {kind} called {pet}.",
    "Our client {name} is based in {city}.",
    "I'm thinking about moving to {city}.",
    "Could you pretend my name is {name}?",
    "Is {city} nice in {month}?",
    "My coworker is allergic to nuts.",
    "In the novel, I'm {ajob} called {name}.",
    "My dad's name isn't {name}.",
]

# A second held-out set of fact lines ("fresh"), written after the extractor was changed against
# the dev half and measured once: the first held-out set's misses were seen while choosing what to
# fix on dev, so only this set says how the rules do on phrasings nobody looked at.
FRESH_FACTS = [
    ("Hey, {name} speaking.", [("name", ["{lname}"])]),
    ("I'm {name} btw.", [("name", ["{lname}"])]),
    ("My first name is {name}.", [("name", ["{lname}"])]),
    ("I've lived in {city} for six years now.", [("location", ["{lcity}"])]),
    ("Home for me is {city} these days.", [("location", ["{lcity}"])]),
    ("Small update, I now live in {city}.", [("location", ["{lcity}"])]),
    ("We moved over to {city} in the spring.", [("location", ["{lcity}"])]),
    ("I'm from {city} originally.", [("origin", ["{lcity}"])]),
    ("{city} is where I grew up.", [("origin", ["{lcity}"])]),
    ("I do accounting for a living.", [("job", ["account"])]),
    ("I teach maths at a secondary school.", [("job", ["teach"])]),
    ("I'm {ajob} over at {employer}.", [("job", ["{job}"]), ("employer", ["{lemployer}"])]),
    ("These days I work for {employer}.", [("employer", ["{lemployer}"])]),
    ("I started at {employer} in {month}.", [("employer", ["{lemployer}"])]),
    ("My little {relative} {name2} just started school.", [("{relslot}", ["{lname2}"])]),
    ("{name2} and I got married last year.", [("family:spouse", ["{lname2}"])]),
    ("Our {kind} is called {pet}.", [("pet:{lpet}", ["{lpet}"])]),
    ("We've got two cats, {pet} and Miso.", [("pet:{lpet}", ["{lpet}"]), ("pet:miso", ["miso"])]),
    ("{pet} is my {kind}.", [("pet:{lpet}", ["{lpet}"])]),
    ("Honestly I adore {thing}.", [("preference:{kthing}", ["likes", "{thing}"])]),
    ("{thing} is my thing.", [("preference:{kthing}", ["likes", "{thing}"])]),
    ("I really don't like {food}.", [("preference:{kfood}", ["dislikes", "{food}"])]),
    ("I'll be in {city} next week for work.", [("plan:{lcity}", ["{lcity}"])]),
    ("We leave for {city} on Saturday.", [("plan:{lcity}", ["{lcity}"])]),
    ("Shellfish makes me sick, I'm allergic.", [("allergy:shellfish", ["shellfish"])]),
    ("I'm {age}.", [("age", ["{age}"])]),
    (
        "I'm {name}, I live in {city} and I work as {ajob}.",
        [("name", ["{lname}"]), ("location", ["{lcity}"]), ("job", ["{job}"])],
    ),
]
FRESH_NEGATIVES = [
    "My roommate {name} is from {city}.",
    "I could never live in {city}.",
    "Should I move to {city}?",
    "If only I worked at {employer}.",
    "I'm no longer at {employer}.",
    "He told me 'call me {name}'.",
    "Let's say I'm {ajob} in {city}.",
    "Do I look like {ajob}?",
    "My kids want a {kind} named {pet}.",
    "I hope to visit {city} someday.",
    "I'm not vegetarian.",
    "My ex lives in {city}.",
]

# A third held-out set ("fresh2"), written before the round-3 changes looked at "fresh"'s misses,
# with its own pools (names, places, employers, jobs nobody tuned on) and varied voices: lower
# case, typos, long sentences, several statements, corrections. Measured once, at the end.
FRESH2_POOLS = {
    "name": [
        "Thảo",
        "Çağrı",
        "Ngozi",
        "Siobhán",
        "Mátyás",
        "Wojciech",
        "Ayşe",
        "Joaquín",
        "Maëlle",
        "Tariq",
        "Zsófia",
        "Dagný",
        "Ömer",
        "Noémie",
        "Anouk",
        "Sindre",
        "Kofi",
        "Radka",
    ],
    "city": [
        "Brno",
        "Thessaloniki",
        "Göteborg",
        "Łódź",
        "Aarhus",
        "Medellín",
        "Kyoto",
        "Bilbao",
        "Ghent",
        "Trondheim",
        "Tbilisi",
        "Düsseldorf",
        "Cape Town",
        "Chiang Mai",
        "Winnipeg",
        "Hobart",
    ],
    "employer": [
        "Bosch",
        "Ericsson",
        "Mercado Libre",
        "Škoda",
        "Nestlé",
        "Infosys",
        "Vattenfall",
        "Klarna",
        "Philips",
        "Equinor",
        "Decathlon",
    ],
    "job": [
        "paramedic",
        "civil engineer",
        "dentist",
        "librarian",
        "sous chef",
        "product manager",
        "midwife",
        "data scientist",
        "pilot",
        "social worker",
        "bus driver",
        "welder",
    ],
    "rarejob": [
        "bookkeeper",
        "sommelier",
        "zookeeper",
        "radiographer",
        "locksmith",
        "beekeeper",
        "stonemason",
    ],
    "relative": [
        "sister",
        "brother",
        "daughter",
        "son",
        "mum",
        "dad",
        "cousin",
        "aunt",
        "uncle",
        "niece",
        "nephew",
        "grandmother",
        "husband",
        "wife",
        "partner",
    ],
    "pets": [
        ("dog", "labrador"),
        ("cat", "siamese"),
        ("parrot", "parrot"),
        ("hamster", "hamster"),
        ("tortoise", "tortoise"),
        ("kitten", "kitten"),
        ("puppy", "puppy"),
        ("ferret", "ferret"),
    ],
    "pet": ["Pepper", "Nacho", "Mishka", "Ziggy", "Brioche", "Olive", "Taco", "Bruno", "Čiko", "Loki"],
    "thing": [
        "hiking",
        "knitting",
        "bouldering",
        "baking",
        "salsa dancing",
        "birdwatching",
        "photography",
        "video games",
        "crosswords",
        "astronomy",
        "woodworking",
    ],
    "food": ["olives", "mushrooms", "cilantro", "spicy food", "blue cheese", "oysters", "liquorice"],
    "allergen": ["peanuts", "penicillin", "shellfish", "pollen", "gluten", "latex", "sesame"],
    "prefer": [("tea", "coffee"), ("trains", "flying"), ("mountains", "beaches"), ("mornings", "evenings")],
}
FRESH2_FACTS = [
    ("hi! i'm {name}, nice to meet u", [("name", ["{lname}"])]),
    ("Call me {name}, everyone does.", [("name", ["{lname}"])]),
    ("{name} here, quick question about my account.", [("name", ["{lname}"])]),
    ("my name's {name} and I'm {ajob}.", [("name", ["{lname}"]), ("job", ["{job}"])]),
    ("Actually, it's {name}, not {name2}. You got my name wrong.", [("name", ["{lname}"])]),
    ("Please address me as {name} from now on.", [("name", ["{lname}"])]),
    ("I go by {name} at work.", [("name", ["{lname}"])]),
    ("my nmae is {name}", [("name", ["{lname}"])]),
    ("i live in {city} with my two kids", [("location", ["{lcity}"])]),
    ("Actually, I moved to {city} last month, so ignore the old address.", [("location", ["{lcity}"])]),
    ("I've been living in {city} since 2019.", [("location", ["{lcity}"])]),
    ("We're based in {city} now, after years in {city2}.", [("location", ["{lcity}"])]),
    ("Just relocated to {city} for the new job!!", [("location", ["{lcity}"])]),
    ("currently living in {city}, sharing a flat with two friends", [("location", ["{lcity}"])]),
    ("Moved to {city} in {month}, still unpacking boxes lol", [("location", ["{lcity}"])]),
    ("I recently moved from {city2} to {city}.", [("location", ["{lcity}"])]),
    ("Our family lives in {city}.", [("location", ["{lcity}"])]),
    ("ive been living in {city} for a while", [("location", ["{lcity}"])]),
    ("Correction: I live in {city}, not {city2}.", [("location", ["{lcity}"])]),
    ("Update: we moved to {city}.", [("location", ["{lcity}"])]),
    ("I'm originally from {city}, but I've lived abroad for years.", [("origin", ["{lcity}"])]),
    ("Born and raised in {city}, moved away at 18.", [("origin", ["{lcity}"])]),
    ("I grew up just outside {city}.", [("origin", ["{lcity}"])]),
    ("{city} is my hometown.", [("origin", ["{lcity}"])]),
    ("My hometown is {city}.", [("origin", ["{lcity}"])]),
    (
        "i'm from {city} originally but live in {city2} now",
        [("origin", ["{lcity}"]), ("location", ["{lcity2}"])],
    ),
    ("I was born in {city} in 1988.", [("origin", ["{lcity}"])]),
    ("im originally from {city}", [("origin", ["{lcity}"])]),
    ("i work as {ajob} at a hospital", [("job", ["{job}"])]),
    ("I'm working as {ajob} these days.", [("job", ["{job}"])]),
    ("By day I'm {ajob}, by night I write terrible poetry.", [("job", ["{job}"])]),
    ("I've been {ajob} for about ten years now.", [("job", ["{job}"])]),
    ("I'm a {rarejob}.", [("job", ["{rarejob}"])]),
    ("I'm a self-employed {rarejob}.", [("job", ["{rarejob}"])]),
    ("I just got a job as {ajob} at {employer}!", [("job", ["{job}"]), ("employer", ["{lemployer}"])]),
    ("My job title is {job}.", [("job", ["{job}"])]),
    ("I'm {ajob} on the night shift.", [("job", ["{job}"])]),
    ("I work at {employer}.", [("employer", ["{lemployer}"])]),
    ("I've been at {employer} for three years.", [("employer", ["{lemployer}"])]),
    ("I'm with {employer} now, in their {city} office.", [("employer", ["{lemployer}"])]),
    ("Started a new job at {employer} on Monday.", [("employer", ["{lemployer}"])]),
    ("i work for {employer} (the {city} office)", [("employer", ["{lemployer}"])]),
    ("Actually I switched jobs, I'm at {employer} now.", [("employer", ["{lemployer}"])]),
    ("I've worked for {employer} since I graduated.", [("employer", ["{lemployer}"])]),
    ("I got hired by {employer} last week.", [("employer", ["{lemployer}"])]),
    ("im {ajob} at {employer}", [("job", ["{job}"]), ("employer", ["{lemployer}"])]),
    ("my {relative} {name2} lives with us", [("{relslot}", ["{lname2}"])]),
    ("I have a {relative} called {name2}.", [("{relslot}", ["{lname2}"])]),
    ("{name2} is my {relative}.", [("{relslot}", ["{lname2}"])]),
    ("{name2}, my {relative}, is visiting next week.", [("{relslot}", ["{lname2}"])]),
    ("My wife, {name2}, is {ajob}.", [("family:spouse", ["{lname2}"])]),
    ("My husband {name2} and I run a café.", [("family:spouse", ["{lname2}"])]),
    ("We named our daughter {name2}.", [("family:daughter:{lname2}", ["{lname2}"])]),
    ("My partner is called {name2}.", [("family:spouse", ["{lname2}"])]),
    ("Oops, my {relative}'s name is actually {name2}.", [("{relslot}", ["{lname2}"])]),
    ("We adopted a {kind} named {pet} last weekend!", [("pet:{lpet}", ["{lpet}"])]),
    ("I have a {breed} called {pet}.", [("pet:{lpet}", ["{lpet}"])]),
    ("my {kind} {pet} is sleeping on my keyboard lol", [("pet:{lpet}", ["{lpet}"])]),
    ("Our {kind}'s name is {pet}.", [("pet:{lpet}", ["{lpet}"])]),
    ("{pet} is my {kind}, she's three.", [("pet:{lpet}", ["{lpet}"])]),
    ("I just adopted a rescue {kind} and named him {pet}.", [("pet:{lpet}", ["{lpet}"])]),
    (
        "I've got a {kind} named {pet} and a {kind2} named {pet2}.",
        [("pet:{lpet}", ["{lpet}"]), ("pet:{lpet2}", ["{lpet2}"])],
    ),
    ("I'm flying to {city} next Tuesday for a conference.", [("plan:{lcity}", ["{lcity}"])]),
    ("Next month I'm going to {city} to see family.", [("plan:{lcity}", ["{lcity}"])]),
    ("We're heading to {city} for the holidays.", [("plan:{lcity}", ["{lcity}"])]),
    ("I'll be in {city} from the 3rd to the 10th.", [("plan:{lcity}", ["{lcity}"])]),
    ("I'm planning a trip to {city} in {month}.", [("plan:{lcity}", ["{lcity}"])]),
    ("Booked a trip to {city} for my birthday!", [("plan:{lcity}", ["{lcity}"])]),
    ("i really enjoy {thing} on weekends", [("preference:{kthing}", ["likes", "{thing}"])]),
    ("I'm a huge fan of {thing}.", [("preference:{kthing}", ["likes", "{thing}"])]),
    ("Big fan of {thing}, tbh.", [("preference:{kthing}", ["likes", "{thing}"])]),
    ("I can't stand {food}.", [("preference:{kfood}", ["dislikes", "{food}"])]),
    ("I hate {food}, always have.", [("preference:{kfood}", ["dislikes", "{food}"])]),
    ("I'm really into {thing} lately.", [("preference:{kthing}", ["likes", "{thing}"])]),
    ("I prefer {a} to {b}.", [("preference:{ka}", ["{a}"])]),
    ("I don't eat {food}.", [("preference:{kfood}", ["dislikes", "{food}"])]),
    ("I'm obsessed with {thing} right now.", [("preference:{kthing}", ["likes", "{thing}"])]),
    ("I'm allergic to {allergen}.", [("allergy:{kallergen}", ["{allergen}"])]),
    ("I'm vegan, have been for five years.", [("diet", ["vegan"])]),
    ("I'm {age}.", [("age", ["{age}"])]),
    ("I turned {age} last month.", [("age", ["{age}"])]),
    (
        "Hi, I'm {name}. I'm {ajob} at {employer} and I live in {city} with my {kind} {pet}.",
        [
            ("name", ["{lname}"]),
            ("job", ["{job}"]),
            ("employer", ["{lemployer}"]),
            ("location", ["{lcity}"]),
            ("pet:{lpet}", ["{lpet}"]),
        ],
    ),
    (
        "So a bit about me: I grew up in {city2}, moved to {city} for university, and now I work for "
        "{employer}.",
        [("origin", ["{lcity2}"]), ("location", ["{lcity}"]), ("employer", ["{lemployer}"])],
    ),
    (
        "my name is {name}, im from {city2}, and i love {thing}",
        [("name", ["{lname}"]), ("origin", ["{lcity2}"]), ("preference:{kthing}", ["likes", "{thing}"])],
    ),
    ("I'm {ajob}; my wife {name2} is a {rarejob}.", [("job", ["{job}"]), ("family:spouse", ["{lname2}"])]),
    (
        "I live in {city} and work as {ajob}, which keeps me busy.",
        [("location", ["{lcity}"]), ("job", ["{job}"])],
    ),
    (
        "We've just moved to {city}, and I started at {employer} on Monday, so things are hectic.",
        [("location", ["{lcity}"]), ("employer", ["{lemployer}"])],
    ),
    (
        "I'm allergic to {allergen} and I don't eat {food}.",
        [("allergy:{kallergen}", ["{allergen}"]), ("preference:{kfood}", ["dislikes", "{food}"])],
    ),
    ("I have a {relative} named {name2} who lives in {city}.", [("{relslot}", ["{lname2}"])]),
    (
        "After years in {city2} I finally settled in {city}, where I teach piano.",
        [("location", ["{lcity}"]), ("job", ["teach"])],
    ),
]
FRESH2_NEGATIVES = [
    "My sister lives in {city}.",
    "If I ever move, it'll be to {city}.",
    "Would I like {city}?",
    "I don't live in {city} anymore.",
    "I'm not {ajob}, I just play one on TV.",
    "My friend {name} works at {employer}.",
    "She said 'I live in {city}' but I didn't believe her.",
    "Write a story where I'm a pilot named {name}.",
    "What would you call me if my name were {name}?",
    "I never wanted to work for {employer}.",
    "Imagine I had a {kind} called {pet}.",
    "Do you know anyone in {city}?",
    "My boss is obsessed with {thing}.",
    "Can you recommend restaurants in {city}?",
    "I used to live in {city}, years ago.",
    "How do I say 'my name is {name}' in Spanish?",
    "I'm not allergic to anything as far as I know.",
    "Our CEO {name} is from {city}.",
    "I might move to {city} next year, not sure yet.",
    "{name} has a {kind} named {pet}.",
    "Is it true that people from {city} love {thing}?",
    "Pretend you're my {relative} {name2}.",
    "I'm looking for a job at {employer}.",
    "I applied to {employer} but haven't heard back.",
    "My colleague just adopted a {kind} named {pet}.",
    "In the game I play {ajob} from {city}.",
    "Tell me about {city}.",
    "I'm so tired today.",
    "Thanks {name}, that helps!",
    "Is {name} a common name in {city}?",
    "The email says: 'I work at {employer} and live in {city}.'",
    "My neighbour's {kind} {pet} keeps barking.",
    "I wouldn't want to live in {city}.",
    "We're not going to {city} after all.",
    "He's {ajob} at {employer}.",
    "lol no, I'm not from {city}",
    "What's the weather in {city} like in {month}?",
    "Translate: 'I have a brother named {name2}'",
    "Hypothetically, if I worked at {employer}, what would my commute be?",
    "My daughter wants a {kind}.",
]


def _key(text: str) -> str:
    words = text.lower().split()
    if len(words[-1]) > 3 and words[-1].endswith("s") and not words[-1].endswith("ss"):
        words[-1] = words[-1][:-1]
    return " ".join(words)


def _fresh2_fills(rng: random.Random) -> dict:
    pools = FRESH2_POOLS
    name, name2 = rng.sample(pools["name"], 2)
    city, city2 = rng.sample(pools["city"], 2)
    (kind, breed), (kind2, _) = rng.sample(pools["pets"], 2)
    pet, pet2 = rng.sample(pools["pet"], 2)
    job, relative, thing, food = (rng.choice(pools[k]) for k in ("job", "relative", "thing", "food"))
    allergen, employer, (a, b) = (
        rng.choice(pools["allergen"]),
        rng.choice(pools["employer"]),
        rng.choice(pools["prefer"]),
    )
    single = {
        "mum": "family:mother",
        "dad": "family:father",
        "husband": "family:spouse",
        "wife": "family:spouse",
        "partner": "family:spouse",
    }
    return {
        "name": name,
        "name2": name2,
        "lname": name.lower(),
        "lname2": name2.lower(),
        "city": city,
        "city2": city2,
        "lcity": city.lower(),
        "lcity2": city2.lower(),
        "kind": kind,
        "breed": breed,
        "kind2": kind2,
        "pet": pet,
        "pet2": pet2,
        "lpet": pet.lower(),
        "lpet2": pet2.lower(),
        "job": job,
        "ajob": ("an " if job[0] in "aeiou" else "a ") + job,
        "rarejob": rng.choice(pools["rarejob"]),
        "employer": employer,
        "lemployer": employer.lower(),
        "relative": relative,
        "relslot": single.get(relative, f"family:{relative}:{name2.lower()}"),
        "thing": thing,
        "kthing": _key(thing),
        "food": food,
        "kfood": _key(food),
        "allergen": allergen,
        "kallergen": _key(allergen),
        "a": a,
        "b": b,
        "ka": _key(a),
        "month": rng.choice(["April", "June", "November"]),
        "age": str(rng.randint(19, 77)),
    }


def fresh2_lines(rng: random.Random, n: int) -> list[dict]:
    lines = []
    for _ in range(n):
        fills = _fresh2_fills(rng)
        if rng.random() < 0.33:
            lines.append(
                {"split": "fresh2", "text": rng.choice(FRESH2_NEGATIVES).format(**fills), "facts": []}
            )
            continue
        text, facts = rng.choice(FRESH2_FACTS)
        lines.append(
            {
                "split": "fresh2",
                "text": text.format(**fills),
                "facts": [
                    {"slot": s.format(**fills), "must": [w.format(**fills).lower() for w in must]}
                    for s, must in facts
                ],
            }
        )
    return lines


# --- the dev half's fact lines (tuned on), written after the held-out ones above ----------------------

DEV_FACTS = [
    ("Just call me {name}.", [("name", ["{lname}"])]),
    ("The name's {name}.", [("name", ["{lname}"])]),
    ("Friends call me {name}.", [("name", ["{lname}"])]),
    ("Currently living in {city}.", [("location", ["{lcity}"])]),
    ("We've just relocated to {city}.", [("location", ["{lcity}"])]),
    ("Update: I live in {city} now.", [("location", ["{lcity}"])]),
    ("I reside in {city}.", [("location", ["{lcity}"])]),
    ("I'm located in {city}.", [("location", ["{lcity}"])]),
    ("I was brought up in {city}.", [("origin", ["{lcity}"])]),
    ("Born and raised in {city}.", [("origin", ["{lcity}"])]),
    ("Raised in {city}, now based in {city2}.", [("origin", ["{lcity}"]), ("location", ["{lcity2}"])]),
    ("I've worked as {ajob} for years.", [("job", ["{job}"])]),
    ("Professionally, I'm {ajob}.", [("job", ["{job}"])]),
    ("I'm employed as {ajob}.", [("job", ["{job}"])]),
    ("I'm now employed at {employer}.", [("employer", ["{lemployer}"])]),
    ("I landed a job at {employer}.", [("employer", ["{lemployer}"])]),
    ("I have been working for {employer} since 2020.", [("employer", ["{lemployer}"])]),
    ("My {kind}, {pet}, loves the snow.", [("pet:{lpet}", ["{lpet}"])]),
    ("We have a {kind}, {pet}.", [("pet:{lpet}", ["{lpet}"])]),
    ("I'm passionate about {thing}.", [("preference:{kthing}", ["likes", "{thing}"])]),
    ("I'm really keen on {thing}.", [("preference:{kthing}", ["likes", "{thing}"])]),
    ("I'm no fan of {food}.", [("preference:{kfood}", ["dislikes", "{food}"])]),
    ("I'm travelling to {city} on Monday.", [("plan:{lcity}", ["{lcity}"])]),
    ("This summer I'm going to {city}.", [("plan:{lcity}", ["{lcity}"])]),
    ("We're travelling to {city} in {month}.", [("plan:{lcity}", ["{lcity}"])]),
    ("I just turned {age}.", [("age", ["{age}"])]),
    (
        "My husband {name2} and I live in {city}.",
        [("family:spouse", ["{lname2}"]), ("location", ["{lcity}"])],
    ),
    (
        "My name is {name}; I work for {employer} and live in {city}.",
        [("name", ["{lname}"]), ("employer", ["{lemployer}"]), ("location", ["{lcity}"])],
    ),
    ("I'm {name}, a {job} in {city}.", [("name", ["{lname}"])]),
]
DEV_NEGATIVES = [
    "My neighbour's kid is called {name}.",
    "I'd like to move to {city} someday.",
    "I wish I lived in {city}.",
    "What if I were {ajob}?",
    "I'm not based in {city}.",
    "My partner's boss works at {employer}.",
    "Say 'my name is {name}' in Spanish.",
    "I'm not working at {employer} anymore.",
    "I'm not travelling to {city}.",
    "{name} is obsessed with {thing}.",
    "Assume I'm allergic to {food}.",
    "Our supplier {name} lives in {city}.",
]
# --- the dev half's conversations (tuned on) ---------------------------------------------------------
# Written in the held-out half's style: questions paraphrased so they share few or no
# words with the evidence (4 of 30 templates share one, about the held-out share), distractors
# naming the same entities after the statement, corrections where only the newest statement
# holds the answer, answers said early in long conversations. Template families, filler lines
# and pools are its own: no held-out template, filler line or pool value is reused, so whatever
# is tuned on dev is not fitted to the held-out half's wording.

DEV_POOLS = {
    "name": [
        "Aurélie",
        "Bogdan",
        "Kalani",
        "Eun-ji",
        "Ravi",
        "Małgorzata",
        "Nils",
        "Ifeoma",
        "Joana",
        "Teodor",
        "Hana",
        "Sigrún",
        "Marek",
        "Luíza",
        "Cormac",
        "Adaeze",
        "Finnur",
        "Yara",
        "Štěpán",
        "Inés",
        "Kenji",
        "Oona",
        "Dariusz",
        "Thandiwe",
        "Gaël",
        "Mirela",
    ],
    "city": [
        "Vilnius",
        "Wrocław",
        "Bordeaux",
        "Antwerp",
        "Linz",
        "Cluj-Napoca",
        "Tampere",
        "Granada",
        "Curitiba",
        "Busan",
        "Accra",
        "Halifax",
        "Perth",
        "Split",
        "Riga",
        "Odense",
        "Valencia",
        "Salvador",
    ],
    "pets": [
        ("dog", "dachshund"),
        ("cat", "ragdoll"),
        ("dog", "spaniel"),
        ("cat", "Bengal"),
        ("dog", "husky"),
        ("rabbit", "Rex rabbit"),
    ],
    "pet": [
        "Pudding",
        "Kasztan",
        "Noodle",
        "Bjørk",
        "Chorizo",
        "Wasabi",
        "Pumpkin",
        "Gizmo",
        "Fèves",
        "Marzipan",
    ],
    "book": ["Stoner", "The Leopard", "Ficciones", "Hunger", "The Makioka Sisters", "Middlemarch"],
    "place": ["Sóller", "Giethoorn", "Łeba dunes", "Lake Bled", "Hallstatt", "the lighthouse car park"],
    "resto": ["Osteria Nonna", "Café Ümit", "Kästner Stube", "Chez Maëlys", "Izakaya Hoshi", "Pod Wawelem"],
    "med": ["atorvastatin", "simvastatin", "rosuvastatin"],
    "color": ["terracotta", "forest green", "slate blue", "mustard"],
    "title": ["Caches that never go stale", "Logs nobody reads", "The cost of one more query"],
    "word": ["heron", "quokka", "saffron", "marble", "pølse", "cedar", "nimbus"],
    "day": ["April 9", "19 September", "July 27", "3 December", "February 16", "25 June", "August 30"],
    "hour": ["8:20", "11:40", "13:25", "17:50"],
    "item": ["earbuds", "smartwatch", "e-reader", "power bank", "tablet", "webcam"],
    "plan": ["Pro", "Growth", "Enterprise"],
    "price": ["€49", "€119", "€260", "€1,450"],
    "thing": ["fencing", "judo", "violin lessons", "swimming club", "robotics club"],
    "street": ["Rua Augusta", "Kastanienallee", "Calle Mayor", "Långgatan", "Ulica Długa"],
    "topic": [
        "tax returns",
        "houseplants",
        "volcanoes",
        "the team offsite",
        "sourdough",
        "medieval castles",
        "electric cars",
        "the budget review",
        "deep-sea fish",
        "composting",
    ],
    "relative": ["niece", "nephew", "uncle", "aunt", "grandfather"],
    "hometown": ["Kaunas", "Plovdiv", "Arequipa", "Daegu", "Kumasi", "Tartu"],
    "job": ["optometrist", "carpenter", "flight attendant", "actuary", "veterinarian"],
    "employer": ["Heineken", "Volvo", "Lufthansa", "Adidas", "Carlsberg", "Maersk"],
}
# (statements in the order said, question, expect, distractors), as HELDOUT_NEEDLES; {x} from DEV_POOLS.
DEV_NEEDLES = [
    (
        ["Our {breed} answers to {pet}."],
        "What did we name our furry friend?",
        "{pet}",
        ["The vet thinks our {kind} is a bit overweight.", "Do {breed}s shed much in spring?"],
    ),
    (
        ["Boarding pass says seat {seat} on the {city} leg."],
        "Where am I sitting on the plane?",
        "{seat}",
        ["The {city} leg might be delayed by the storm."],
    ),
    (
        ["The office alarm code is {n}{n2}.", "Security changed the office alarm, it's {n2}{n} from Monday."],
        "What do I punch in to disarm the building?",
        "{n2}{n}",
        ["The office alarm went off at 3 am again."],
    ),
    (
        ["{name} still has my camping stove from the festival."],
        "Who took the cooking gear I own?",
        "{name}",
        ["The camping stove needs a new gas canister anyway."],
    ),
    (
        ["Parents' evening is on {day}."],
        "When do I meet my kid's teachers?",
        "{day}",
        ["Parents' evening always runs late."],
    ),
    (
        ["Optician booked for {day}.", "The optician rescheduled me to {day2}, {hour}."],
        "When's my optician appointment now?",
        "{hour}",
        ["My glasses got scratched on the optician's chair last time."],
    ),
    (
        ["Ordered spare filter {code} for the dishwasher."],
        "Which replacement bit did I get for the kitchen machine?",
        "{code}",
        ["The dishwasher leaves spots on the glasses.", "The dishwasher guy never called back."],
    ),
    (
        ["Every evening I'm on {med} for cholesterol now."],
        "What do I swallow before bed?",
        "{med}",
        ["My cholesterol results come back next month."],
    ),
    (
        ["Our storage box is unit {n2} at the {place} depot."],
        "Where do we keep the extra stuff?",
        "unit {n2}",
        ["The {place} depot closes early on Sundays."],
    ),
    (
        ["We painted the hallway {color} in the end."],
        "What tone did we go for in the corridor?",
        "{color}",
        ["The hallway still smells of paint."],
    ),
    (
        ["My keynote is going to be '{title}'."],
        "What's the heading of my big speech?",
        "{title}",
        ["The keynote slot is forty minutes, no questions."],
    ),
    (
        ["Booked {resto} for Mum's 70th."],
        "Where is my mother's birthday dinner?",
        "{resto}",
        ["Mum's 70th is going to be a big one."],
    ),
    (
        ["Car's in bay {seat} at the {place} park-and-ride."],
        "Where did I leave the vehicle?",
        "{seat}",
        ["The {place} park-and-ride was packed this morning."],
    ),
    (
        ["Router admin login is {word}{n2}.", "Reset the router, the admin login is {word2}{n} now."],
        "How do I get into the router settings?",
        "{word2}{n}",
        ["The router keeps dropping out at night."],
    ),
    # Statements the offline extractor turns into facts (phrasings of DEV_FACTS), so the facts block
    # is measured on dev too.
    (
        ["We have a {kind}, {pet}."],
        "Which animal lives with us, and what's it called?",
        "{pet}",
        ["Our {kind} hates the vacuum cleaner."],
    ),
    (
        ["I'm employed as {ajob}."],
        "What do I do for a living?",
        "{job}",
        ["Work has been hectic this month."],
    ),
    (
        ["I landed a job at {employer}."],
        "Which company hired me?",
        "{employer}",
        ["The new office has free coffee, at least."],
    ),
    (
        ["I was brought up in {hometown}."],
        "Where did I spend my childhood?",
        "{hometown}",
        ["My childhood home was sold last year."],
    ),
]
DEV_SUPPORT = [
    (
        ["Case {order}: the {item} stopped charging after a week."],
        "What's the fault with my gadget?",
        "stopped charging",
        ["Any update on case {order}?"],
    ),
    (
        ["Our workspace id is {code}."],
        "Which identifier does our team account have?",
        "{code}",
        ["The workspace was created by our old IT person."],
    ),
    (
        ["Billing contact is {name}.", "Please change the billing contact to {name2}."],
        "Who receives our invoices now?",
        "{name2}",
        ["Billing emails sometimes land in spam."],
    ),
    (
        ["The refund for {order} was promised by {day}."],
        "By when should the money come back?",
        "{day}",
        ["The refund form was confusing."],
    ),
    (
        ["Logging in on Android fails with {code}."],
        "What error does the Android app show me?",
        "{code}",
        ["Android updated itself last night."],
    ),
    (
        ["We pay {price} a month for the {plan} tier."],
        "What does our subscription cost?",
        "{price}",
        ["The {plan} tier has no single sign-on, sadly."],
    ),
]
DEV_TWO = [
    (
        ["I'm picking {name} up from the station at {hour}."],
        "When do you collect our guest?",
        "{hour}",
        ["{name} always misses the first train."],
    ),
    (
        ["Moved flats, it's {n} {street} now."],
        "Where do you live these days?",
        "{street}",
        ["The move was exhausting, never again."],
    ),
    (
        ["Signed the kids up for {thing} on Thursdays."],
        "What activity did the children join?",
        "{thing}",
        ["Thursdays are chaos with the kids."],
    ),
    (
        ["Our wedding venue is {place}."],
        "Where are we getting married?",
        "{place}",
        ["The wedding guest list keeps growing."],
    ),
    (
        [
            "Dinner with the Okafors is on Saturday.",
            "Change of plan, dinner with the Okafors moved to {day}.",
        ],
        "When are we eating with the Okafors?",
        "{day}",
        ["The Okafors are bringing dessert."],
    ),
    (
        ["My {relative} {name}'s train gets in at {hour}."],
        "When does my relative arrive?",
        "{hour}",
        ["My {relative} {name} hates long journeys."],
    ),
]
DEV_FILLER_USER = [
    "Could you outline a plan for {topic}?",
    "I keep putting off {topic}, any advice?",
    "Had a chaotic morning, the bus broke down.",
    "Suggest a film for a rainy evening.",
    "What's {n} percent of 250?",
    "Compare two approaches to {topic}.",
    "My laptop fan is really loud lately.",
    "How much water should I drink a day?",
    "I want something quick with pasta and spinach.",
    "Tell me one surprising fact about {topic}.",
    "It's been raining in {city} all week.",
    "Help me write a thank-you note.",
    "How does a mortgage offset account work?",
    "Is a standing desk worth it?",
    "I read an article about {topic} on the train.",
    "Write a haiku about {topic}.",
    "What's the difference between weather and climate?",
    "My {relative} visited and we talked about {topic}.",
    "How long does it take to walk five kilometres?",
]
DEV_FILLER_ASSISTANT = [
    "Here's a simple plan in three steps.",
    "Start small: fifteen minutes a day helps.",
    "That sounds stressful.",
    "A classic comedy might suit the mood.",
    "That works out to a small number; here's the sum.",
    "One is faster, the other cheaper.",
    "Cleaning the vents often helps.",
    "Around two litres for most adults.",
    "Garlic, olive oil, spinach and parmesan: done in ten minutes.",
    "Here's one you may not know.",
    "Stay dry out there!",
    "Here's a warm, short note.",
    "It lowers the interest you pay.",
    "It helps some people; alternate sitting and standing.",
    "Interesting read!",
    "Here is a haiku.",
    "Weather is the day, climate the decades.",
    "Sounds like a nice visit.",
    "About an hour at a steady pace.",
]
DEV_SUPPORT_FILLER_USER = [
    "Hello, one more thing about our subscription.",
    "Can we get usage reports by email?",
    "The mobile app feels sluggish today.",
    "How do I transfer ownership of a project?",
    "Where can I change the notification settings?",
    "Great, that fixed it.",
    "Is there an API rate limit?",
    "Could someone senior look at this?",
    "Search results also seem out of date for us.",
]
DEV_SUPPORT_FILLER_AGENT = [
    "Hi there, happy to look into this.",
    "Yes, you can schedule them under Insights.",
    "Thanks, we've passed that to the mobile team.",
    "Owners can do that from Project → Members.",
    "It's under Profile → Notifications.",
    "Glad to hear it!",
    "Yes, 600 requests a minute per key.",
    "I've asked a senior colleague to join.",
    "We've reindexed your search; give it an hour.",
]
DEV_ACKS = ["Understood.", "Thanks, I'll keep that in mind.", "All right, noted down.", "Good to know!"]


def _dev_fills(rng: random.Random) -> dict:
    pools = DEV_POOLS
    name, name2 = rng.sample(pools["name"], 2)
    day, day2 = rng.sample(pools["day"], 2)
    word, word2 = rng.sample(pools["word"], 2)
    kind, breed = rng.choice(pools["pets"])
    fills = {
        k: rng.choice(pools[k])
        for k in (
            "city",
            "pet",
            "book",
            "place",
            "resto",
            "med",
            "color",
            "title",
            "hour",
            "item",
            "plan",
            "price",
            "thing",
            "street",
            "topic",
            "relative",
            "hometown",
            "job",
            "employer",
        )
    }
    return {
        **fills,
        "name": name,
        "name2": name2,
        "day": day,
        "day2": day2,
        "word": word,
        "word2": word2,
        "kind": kind,
        "breed": breed,
        "ajob": ("an " if fills["job"][0] in "aeiou" else "a ") + fills["job"],
        "seat": f"{rng.randint(3, 39)}{rng.choice('ACDFJK')}",
        "n": str(rng.randint(2, 28)),
        "n2": str(rng.randint(30, 99)),
        "code": f"{rng.choice(['RV', 'MX', 'HT', 'WQ'])}{rng.randint(100, 999)}-{rng.choice('ABCDEFGH')}",
        "order": f"C-{rng.randint(100000, 999999)}",
    }


def _fills(rng: random.Random) -> dict:
    name, name2 = rng.sample(NAMES, 2)
    city, city2 = rng.sample(CITIES, 2)
    kind, breed = rng.choice(PETS)
    pet = rng.choice(PET_NAMES)
    thing = rng.choice(THINGS)
    employer = rng.choice(EMPLOYERS)
    food = rng.choice(FOODS)
    day, day2 = rng.sample(DAYS, 2)
    word, word2 = rng.sample(WORDS, 2)
    band = rng.choice(BANDS)
    return {
        "day": day,
        "day2": day2,
        "word": word,
        "word2": word2,
        "band": band,
        "lband": band.lower(),
        "kfood": food[:-1] if food.endswith("s") and not food.endswith("ss") else food,
        "name": name,
        "name2": name2,
        "lname": name.lower(),
        "lname2": name2.lower(),
        "city": city,
        "city2": city2,
        "lcity": city.lower(),
        "lcity2": city2.lower(),
        "kind": kind,
        "breed": breed,
        "pet": pet,
        "lpet": pet.lower(),
        "job": (job := rng.choice(JOBS)),
        "ajob": ("an " if job[0] in "aeiou" else "a ") + job,
        "employer": employer,
        "lemployer": employer.lower(),
        "thing": thing,
        "kthing": thing[:-1] if thing.endswith("s") and not thing.endswith("ss") else thing,
        "food": food,
        "relative": (relative := rng.choice(RELATIVES)),
        "relslot": RELATIVE_SLOTS.get(relative, f"family:{relative}:{name2.lower()}"),
        "month": rng.choice(["March", "July", "October"]),
        "age": str(rng.randint(19, 77)),
        "gate": f"{rng.choice('ABCDE')}{rng.randint(2, 48)}",
        "n": str(rng.randint(2, 28)),
        "n2": str(rng.randint(30, 99)),
        "hour": rng.choice(["9:30", "10:15", "14:00", "16:45"]),
        "resto": rng.choice(RESTOS),
        "book": rng.choice(BOOKS),
        "code": f"{rng.choice(['QX', 'ZT', 'PL', 'KB'])}-{rng.randint(1000, 9999)}",
        "place": rng.choice(PLACES),
        "title": rng.choice(TITLES),
        "med": rng.choice(MEDS),
        "color": rng.choice(COLORS),
        "order": f"#{rng.randint(10000, 99999)}",
        "plan": rng.choice(PLANS),
        "screen": rng.choice(SCREENS),
        "phone": f"+47 {rng.randint(400, 999)} {rng.randint(10, 99)} {rng.randint(100, 999)}",
        "topic": rng.choice(TOPICS),
        "item": rng.choice(ITEMS),
    }


def _fill(text: str, fills: dict) -> str:
    return text.format(**fills)


def _filler(
    rng: random.Random, style: str, speakers: tuple[str, str] | None, half: str = "heldout"
) -> tuple[str, str]:
    if half == "dev":
        fills = _dev_fills(rng)
        users, agents = (
            (DEV_SUPPORT_FILLER_USER, DEV_SUPPORT_FILLER_AGENT)
            if style == "support"
            else (DEV_FILLER_USER, DEV_FILLER_ASSISTANT)
        )
        user, agent = _fill(rng.choice(users), fills), _fill(rng.choice(agents), fills)
        return (f"{speakers[0]}: {user}", f"{speakers[1]}: {agent}") if speakers else (user, agent)
    fills = _fills(rng)
    if style == "support":
        user, agent = rng.choice(SUPPORT_FILLER_USER), rng.choice(SUPPORT_FILLER_AGENT)
    else:
        user, agent = rng.choice(FILLER_USER), rng.choice(FILLER_ASSISTANT)
    user, agent = _fill(user, fills), _fill(agent, fills)
    if speakers:
        user, agent = f"{speakers[0]}: {user}", f"{speakers[1]}: {agent}"
    return user, agent


def _pools(half: str, style: str) -> list:
    if half == "heldout":
        return {"support": HELDOUT_SUPPORT, "two-person": HELDOUT_TWO}.get(style, HELDOUT_NEEDLES)
    return {"support": DEV_SUPPORT, "two-person": DEV_TWO}.get(style, DEV_NEEDLES)


def conversation(index: int, half: str, style: str, rng: random.Random) -> dict:
    """One conversation: filler turns with each needle's statements said once (a correction later
    than what it corrects), its distractors after them, and the needle's question at the end."""
    dev = half == "dev"  # the dev half draws from its own pools; the held-out half's draws are as before
    speakers = (
        tuple(rng.sample(DEV_POOLS["name"] if dev else NAMES, 2))
        if style in ("two-person", "multi-session")
        else None
    )
    options = _pools(half, style)
    count = min({"long": 5, "multi-session": 6}.get(style, 3), len(options))
    length = {"long": 100, "multi-session": 150}.get(style, rng.randint(24, 60))
    # In the long styles the answers are old: said in the first fifth, the entity mentioned later on.
    said_within = length // 5 if style in ("long", "multi-session") else length // 2
    lines: dict[int, str] = {}
    questions = []
    free = list(range(length))
    rng.shuffle(free)
    for says, ask, expect, distract in rng.sample(options, count):
        fills = _dev_fills(rng) if dev else _fills(rng)
        first = rng.choice([i for i in free if i < said_within] or free)
        free.remove(first)
        # A correction comes later than what it corrects; distractors come after the statements.
        at = [first] + sorted(rng.sample([i for i in free if i > first], len(says) - 1))
        for i, text in zip(at, says, strict=True):
            lines[i] = _fill(text, fills)
        free = [i for i in free if i not in at]
        for text in distract:
            later = [i for i in free if i > at[-1]]
            if later:
                i = rng.choice(later)
                lines[i] = _fill(text, fills)
                free.remove(i)
        questions.append({"ask": _fill(ask, fills), "expect": _fill(expect, fills)})
    day = date(2025, 1, 1) + timedelta(days=rng.randint(0, 300))
    messages = []
    for i in range(length):
        if style == "multi-session" and i and i % 30 == 0:
            day += timedelta(days=rng.randint(3, 20))
        elif i and i % 40 == 0:
            day += timedelta(days=1)
        if i in lines:
            user = f"{speakers[0]}: {lines[i]}" if speakers else lines[i]
            if dev:
                ack = rng.choice(DEV_ACKS)
                agent = f"{speakers[1]}: {ack}" if speakers else ack
            else:
                agent = (
                    f"{speakers[1]}: Noted, thanks."
                    if speakers
                    else rng.choice(["Noted!", "Got it.", "Okay, thanks for letting me know."])
                )
        else:
            user, agent = _filler(rng, style, speakers, half)
        messages.append(["user", user, day.isoformat()])
        messages.append(["assistant", agent, day.isoformat()])
    return {
        "id": f"{style}-{index:03d}",
        "split": half,
        "style": style,
        "messages": messages,
        "questions": questions,
    }


def fact_lines(half: str, rng: random.Random, n: int) -> list[dict]:
    positives, negatives = {
        "heldout": (HELDOUT_FACTS, HELDOUT_NEGATIVES),
        "fresh": (FRESH_FACTS, FRESH_NEGATIVES),
    }.get(half, (FACT_TEMPLATES + DEV_FACTS, NEGATIVE_TEMPLATES + DEV_NEGATIVES))
    lines = []
    for _ in range(n):
        fills = _fills(rng)
        if rng.random() < 0.3:
            lines.append({"split": half, "text": _fill(rng.choice(negatives), fills), "facts": []})
            continue
        text, facts = rng.choice(positives)
        lines.append(
            {
                "split": half,
                "text": _fill(text, fills),
                "facts": [
                    {"slot": _fill(s, fills), "must": [_fill(w, fills).lower() for w in must]}
                    for s, must in facts
                ],
            }
        )
    return lines


def _unambiguous(conv: dict) -> bool:
    """Each answer is said exactly once in the conversation (not also by a filler line, another
    needle or a speaker's name), so finding it means finding the right message."""
    text = "\n".join(m[1] for m in conv["messages"]).lower()
    return all(text.count(q["expect"].lower()) == 1 for q in conv["questions"])


def build() -> dict:
    # One generator per conversation and per half's fact lines: editing the dev templates never
    # changes a held-out conversation.
    styles = ["assistant", "support", "two-person", "long", "multi-session", "assistant"]
    conversations = []
    for i in range(156):
        half = "dev" if i % 2 == 0 else "heldout"
        for attempt in range(50):
            conv = conversation(
                i, half, styles[(i // 2) % len(styles)], random.Random(f"{SEED}-conversation-{i}-{attempt}")
            )
            if _unambiguous(conv):
                break
        conversations.append(conv)
    lines = (
        fact_lines("dev", random.Random(f"{SEED}-facts-dev"), 300)
        + fact_lines("heldout", random.Random(f"{SEED}-facts-heldout"), 300)
        + fact_lines("fresh", random.Random(f"{SEED}-facts-fresh"), 200)
        + fresh2_lines(random.Random(f"{SEED}-facts-fresh2"), 220)
    )
    return {
        "about": __doc__.strip().split("\n\n")[0],
        "seed": SEED,
        "conversations": conversations,
        "fact_lines": lines,
    }


if __name__ == "__main__":
    OUT.write_text(json.dumps(build(), ensure_ascii=False, indent=0) + "\n")
    data = json.loads(OUT.read_text())
    print(
        f"{OUT.name}: {len(data['conversations'])} conversations, "
        f"{sum(len(c['messages']) for c in data['conversations'])} messages, {len(data['fact_lines'])} fact "
        "lines"
    )
