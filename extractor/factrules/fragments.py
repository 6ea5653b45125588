"""Named pieces of the rules' regular expressions: names, places, organisations, the words a statement may
open with, and the cue phrases of the languages users code-switch into. Every piece runs in linear time on any
input: no alternative of FILLER is two others in a row, and scans over whitespace are possessive.
"""

from __future__ import annotations

import re

from .lexicons import OPENERS

# Capital letters of the Latin, Greek and Cyrillic scripts (Python's re has no \p{Lu}): names and
# places such as Zoë, Łukasz, Ørsted, Élodie or Żaneta open with one of these.
UPPER = (
    "["
    + "".join(
        re.escape(c)
        for c in sorted({chr(i) for i in (*range(0x41, 0x530), *range(0x1E00, 0x1F00)) if chr(i).isupper()})
    )
    + "]"
)
LETTER = r"[^\W\d_]"  # any letter, any script
WORD_CHARS = r"(?:[^\W\d_]|['\-])"
# A title before a name ("This is Dr. Rahel Tesfaye", "My name is Mrs Adaeze Okafor"); `normalize` drops
# its full stop so the sentence is not cut there.
HONORIFIC = r"(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Sir|Dame|Herr|Frau|Mme|Mlle|Sra|Srta)"
NAME = rf"({UPPER}{WORD_CHARS}{{1,30}}(?:\s+{UPPER}{WORD_CHARS}{{1,30}})?)"
# A person's name, with its title if any ("Mrs Adeyemi here", "Dr Priyanka Rao here"); not for pets.
NAME_T = rf"((?:{HONORIFIC}\s+(?={UPPER}))?{UPPER}{WORD_CHARS}{{1,30}}(?:\s+{UPPER}{WORD_CHARS}{{1,30}})?)"
# The particles of place and company names in other languages ("Caxias do Sul", "Banca di Roma").
PARTICLES = "de|del|da|do|dos|das|di|du|della|des|la|le|les|sur|en|am|im|an|der|den|van|von|al|el"
PLACE = (
    rf"((?:the\s+)?(?:(?i:rural|northern|southern|eastern|western|central|coastal|upstate|downstate|outer|inner|greater)\s+)?{UPPER}[\w'\-.]*(?:\s+(?:{UPPER}[\w'\-.]*|{PARTICLES}|upon|on|of)){{0,3}}"
    rf"(?:,\s+{UPPER}[\w'\-]+){{0,1}})"
)
ORG = rf"({UPPER}[\w&'\-.]*(?:(?:\s+(?:&|of|and|the|{PARTICLES}))?\s+{UPPER}[\w&'\-.]*){{0,4}})"
REST = r"(.+)"
PLACE_NC = "(?:" + PLACE[1:]  # the same, capturing nothing
ORG_NC = "(?:" + ORG[1:]
# Words a statement may open with. Linear time: no alternative is two others in a row ("oh and" is
# "oh" then "and"), so a run of them ("oh and oh and …") is read one way, never 2^n ways.
FILLER = r"^(?:(?i:" + "|".join(OPENERS) + r")[,!.:\-–]*\s+)*"
DIETS = frozenset(
    "vegetarian vegan pescatarian pescetarian keto gluten-free lactose-intolerant kosher halal plant-based "
    "paleo dairy-free".split()
)
# Words between "a" and the pet ("a golden retriever", "a little black cat"), at most two.
PET_ADJECTIVES = (
    r"(?:\d{1,2}[\s\-]+(?i:year|month|week)s?[\s\-]+(?i:old)\s+)?(?:(?i:little|baby|rescue(?:d)?|old|young|new|big|small|tiny|golden|black|white|ginger|grey|gray|"
    r"second|third|fourth|"
    r"brown|tabby|senior|fluffy|adorable|sweet|lovely|cute)\s+){0,2}"
)
PETS = (
    "dog|cat|puppy|kitten|parrot|rabbit|bunny|hamster|horse|pony|turtle|tortoise|bird|budgie|fish|guinea pig|"
    "ferret|gecko|lizard|snake|beagle|corgi|labrador|lab|poodle|terrier|spaniel|greyhound|husky|retriever|"
    "dachshund|collie|sheepdog|pug|bulldog|schnauzer|whippet|tabby|siamese|maine coon|lop|dwarf rabbit|"
    "chihuahua|dalmatian|rottweiler|doberman|shih tzu|maltese|pomeranian|border collie|golden retriever|"
    "german shepherd|cockatiel|canary|chinchilla|hedgehog|axolotl|iguana|tarantula|goldfish|rat|pig|goat|"
    "chicken|hen|duck|alpaca|donkey|mare|kitty|pup|doggo|moggy|bearded dragon|ragdoll|persian|bengal|sphynx|"
    "cockapoo|labradoodle|goldendoodle|cavapoo|jack russell|staffie|westie|sausage dog|shepherd|mutt|"
    "cockatoo|macaw|lovebird|parakeet|gerbil|mouse|tortie|calico|rescue dog|rescue cat|"
    "lurcher|staffy|pit bull|pitbull|boxer|mastiff|akita|shiba inu|shiba|samoyed|malamute|vizsla|weimaraner|"
    "basset hound|basset|bloodhound|cavalier|cavachon|maltipoo|bichon|havanese|papillon|frenchie|french "
    "bulldog|boston terrier|sheltie|springer spaniel|springer|cocker spaniel|cocker|kelpie|heeler|great "
    "dane|newfoundland|bernese|ridgeback|saluki|galgo|podenco|borzoi|lhasa apso|yorkie|scottie|doxie|street "
    "dog|stray|burmese|british shorthair|shorthair|longhair|abyssinian|birman|tomcat|conure|budgerigar|quail|"
    "goose|lamb|calf|stick insect|snail|hermit crab|crab|frog|toad|newt|python|corn snake|ball "
    "python|degu|sugar glider|cavy|leopard gecko|chameleon|terrapin|koi|betta|tetra|guppy|guinea "
    "pigs|pigeon|dove|tortoiseshell"
)
HEDGES = re.compile(
    r"\b(?:maybe|perhaps|probably|might|would|could|wish|hope|suppose|imagine|pretend|if|"
    r"hypothetically|joking|kidding)\b",
    re.IGNORECASE,
)
# Nationalities and other adjectives end like this; a name that does too is missed (precision first).
# Not "an" alone, which ends many names (Mohan, Logan, Susan); "can" does (American, Mexican).
ADJECTIVE_ENDINGS = (
    "ish",
    "ese",
    "ian",
    "ean",
    "can",
    "ic",
    "ch",
    "ed",
    "ing",
    "ful",
    "less",
    "ous",
    "ive",
    "ly",
)
WHEN_WORDS = (
    "monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|may|june|july|"
    "august|september|october|november|december|christmas|easter"
)
ROLE_TAIL = re.compile(
    r"\s+(?:for|at|in|with|since|from|on|there|here|now|by|and|but|so|lol|haha|tbh|though|because|near|outside)\b.*$",
    re.IGNORECASE,
)
DETERMINERS = frozenset("the a an my our your his her their this that every no any some each one".split())
RELATIVES = (
    "wife|husband|partner|spouse|sister|brother|daughter|son|mother|father|mom|mum|dad|cousin|"
    "grandmother|grandfather|grandma|grandpa|aunt|uncle|niece|nephew|fiancée?|fiancee?|girlfriend|boyfriend|"
    "hubby|wifey|bf|gf|other\\s+half|better\\s+half|significant\\s+other|stepson|stepdaughter|stepmother|stepfather|stepmom|stepmum|stepdad|stepsister|stepbrother|"
    "half-sister|half-brother|twin|sibling|granddaughter|grandson|mother-in-law|father-in-law|sister-in-law|"
    "brother-in-law|daughter-in-law|son-in-law|mommy|mama|mam|papa|daddy|granny|nana|grandad|granddad|"
    "godson|goddaughter|godmother|godfather|sis|bro|auntie|aunty|gran|nan|nanna|grandmom|grandpop|great-grandmother|great-grandfather|great-aunt|great-uncle|"
    "grandniece|grandnephew|stepchild|ward|"
    # Kin words of the languages users code-switch into ("my nanay Corazon", "my babcia Halina").
    "nanay|inay|tatay|itay|lola|lolo|asawa|babcia|dziadek|tata|żona|zona|mąż|maz|eomma|umma|appa|halmeoni|harabeoji|"
    "yiayia|giagia|pappou|papou|mamma|pabbi|afi|ammi|abbu|amma|abba|nani|dadi|nanaji|dadaji|bhai|didi|abuela|abuelo|"
    "mẹ|bố|anne|baba|mke|mume|tad|taid|nain|mamgu|tadcu"
)
PRONOUNS = frozenset("he she it this that there here who what which everyone someone nobody".split())
PLURAL_FORMS = {
    (
        w[:-1] + "ies"
        if w.endswith("y") and w[-2] not in "aeiou"
        else w + ("es" if w.endswith(("sh", "ch", "s")) else "s")
    ): w
    for w in (
        "sister brother daughter son cousin aunt uncle niece nephew twin".split()
        + [p for p in PETS.split("|") if not p.endswith("s")]
    )
}
PLURAL_FORMS.update(
    {
        "kids": "kid",
        "children": "child",
        "boys": "son",
        "girls": "daughter",
        "puppies": "puppy",
        "mice": "mouse",
        "fish": "fish",
        "geese": "goose",
        "budgies": "budgie",
    }
)
PLURALS = "|".join(sorted(PLURAL_FORMS, key=len, reverse=True))
# The form an allergen comes in is not the allergy: "lupin flour" is lupin, "dairy products" dairy.
ALLERGEN_FORM = re.compile(
    r"\s+(?:flour|powder|products?|extract|proteins?|dust|stings?|bites?|drugs?|medications?|meds|"
    r"antibiotics?|venom)$",
    re.IGNORECASE,
)  # "bee stings" is bee, "sulfa drugs" sulfa
FIELDS = (
    "IT|tech|finance|marketing|sales|healthcare|education|hospitality|retail|construction|insurance|logistics|"
    "HR|law|publishing|advertising|banking|consulting|research|government|engineering|accounting|journalism|"
    "nursing|medicine|software|real estate|the arts|fashion|tourism|pharma|biotech|academia|the NHS|IT "
    "support|customer service|customer support|data "
    "science|cybersecurity|security|design|film|television|TV|radio|recruitment|manufacturing|agriculture|"
    "energy|telecoms|the military|the navy|the army|local government"
)
# A form field left empty or answered with no value.
NO_VALUE = re.compile(r"(?i:none|no|nil|n/a|na|nothing|unknown|tbd|tbc|various|not\s+sure|-)\s*(?:$|[,.!;])")
FOREIGN_LIVE = (
    r"(?i:ich\s+wohne\s+in|ich\s+lebe\s+in|j'habite\s+(?:à|a|en)|je\s+vis\s+(?:à|a|en)|vivo\s+en|vivo\s+em|moro\s+em|"
    r"vivo\s+a|abito\s+a|ik\s+woon\s+in|jag\s+bor\s+i|mieszkam\s+w)"
)
# Words after "I'm in X" that make it a stay, not a home ("I'm in Oslo for a conference till Friday").
STAY_WORDS = re.compile(
    r"\b(?i:for\s+(?:a|the|an|my|our|work|business|\d)|on\s+(?:a|an|my|our|holiday|vacation|business|layover)|"
    r"till|until|this\s+(?:week|weekend|month|morning|afternoon|evening)|today|tonight|tomorrow|right\s+now|"
    r"at\s+the\s+moment|visiting|trip|holiday|vacation|conference|layover|airport|hotel|hostel|staying|"
    r"stuck|just\s+landed|landed|arrived|passing\s+through|stopover|transit)\b"
)
FOREIGN_MY = (
    r"(?i:mi|mis|mon|ma|mes|mein|meine|meu|minha|mio|mia|nuestro|nuestra|notre|unser|unsere|nosso|"
    r"nossa|mijn|onze)"
)
FOREIGN_LIVE_CUES = (
    r"(?i:(?:tôi\s+|mình\s+|em\s+)?(?:đang\s+)?sống\s+ở|ninaishi|naishi|ninakaa|nakatira\s+(?:ako\s+)?sa|"
    r"ég\s+bý\s+(?:í|á)|eg\s+by\s+i|dw\s+i'n\s+byw\s+yn|dwi'n\s+byw\s+yn|rwy'n\s+byw\s+yn|jeg\s+bor\s+(?:i|på)|"
    r"mieszkam\s+we?|saya\s+tinggal\s+di|tinggal\s+di|ya\s+zhivu\s+v|bydlím\s+v|bydlim\s+v|meno\s+st[oi]n?|eu\s+moro\s+em)"
)
# Someone else before the cue makes it theirs ("my friend Kofi, 24 tuổi"); "my name is …" is the user's own.
OTHER_HEAD = re.compile(
    r"(?i)\b(?:his|her|their|he|she|they|he's|she's|they're|ấy|họ|yeye|siya|sila|[^\W\d_]+'s|"
    r"unki|unka|unke|uski|uska|uske|woh|inki|inka|iski|iska|hij|zij|ze|hän|ele|ela|huwa|hiya|"
    r"(?:kakak|adik|ibu|ayah|bapak|suami|istri|anak|teman|pacar|abang)\s+(?:saya|aku)|"  # Indonesian
    r"(?:my|our|mijn|onze|meri|mera|mere|minun)\s+(?!name\b|naam\b)[\w\-]+)(?![\w'])"
)
# Places, origins and ages in another language are read anywhere in a statement, as the possessives are: their
# cues are words no English sentence uses ("Mình tên là Linh, 24 tuổi, đang sống ở Đà Nẵng").
NOT_LETTER_BEFORE = r"(?<![^\W\d_])"
LIVE_CUES = (
    r"(?i:(?:ahora\s+)?(?:vivimos|radico|radicamos|resido|residimos)\s+en|(?:moro|moramos|vivemos|resido)\s+(?:em|no|na)|"
    r"(?:visc|vivim)\s+a|(?:on\s+habite|nous\s+habitons|on\s+vit|nous\s+vivons|je\s+réside|j'habite|je\s+vis)\s+(?:à|a|au|en|dans)|"
    r"(?:abitiamo|viviamo)\s+(?:a|in|ad)|(?:ich\s+|i\s+|wir\s+)?(?:wohne|wohn|lebe|wohnen|leben)\s+(?:jetzt\s+|seit\s+\w+\s+)?(?:in|im)|"
    r"(?:we\s+|wij\s+)wonen\s+in|(?:ek\s+|ons\s+)woon\s+in|(?:jeg\s+|jag\s+|eg\s+|vi\s+)?bor\s+(?:i|på)|mieszkamy\s+w(?:e)?|"
    r"(?:bydlíme|bydlime|žiju|ziju|žijem|zijem|bývam|byvam)\s+v(?:e)?|(?:živim|zivim|živimo|zivimo)\s+(?:u|"
    r"you|v)|"  # ("u" read as chat "you")
    r"(?:locuiesc|locuim|trăiesc|traiesc|stau)\s+(?:în|in|la)|(?:ya\s+)?(?:zhivu|zhyvu)\s+v|jetoj\s+(?:në|ne)|zo\s+st[oi]n?|"
    r"(?:ani\s+)?(?:gar|gara|garah|garim)\s+(?:b[ea]?-?|b'|ב)|(?:aku\s+|kami\s+)?(?:tinggal|menetap|berdomisili|domisili)\s+di|"
    r"nagpuyo\s+(?:ko\s+)?sa|nakatira\s+kami\s+sa|mi\s+loĝas\s+en|(?:mwen|m)\s+(?:rete|abite)\s+(?:nan|an|Okap)?|"
    r"(?:wo|wǒ)\s+(?:zhu|zhù)\s+(?:zai|zài)|ngihlala\s+(?:e|kwa|se)?|ndihlala\s+(?:e|kwa)?|ina\s+zaune\s+a|"
    # (Estonian keeps the stem: "Tartus"; not Finnish, Latvian or Lithuanian)
    r"mo\s+n\s*gbe\s+(?:ni|si)|(?:ma\s+)?elan|"
    r"(?:dar|tu)(?=\s+"
    + UPPER
    + r"[^\W\d_]*+\s+zendegi)|(?:tá\s+mé|táim)\s+i\s+mo\s+chónaí\s+(?:i|in)|i\s+mo\s+chónaí\s+(?:i|in))"
)
NOT_NOW = re.compile(
    r"(?i)(?<![\w'])(?:nicht|kein\w*|nie\w*|ikke|inte|ej|nie|non|não|nao|niet|geen|tidak|bukan|hindi|değil|"
    r"degil|nem|pas|ne|no|nu|früher|fruher|tidligere|tidigare|wcześniej|dulu|dati|kiedyś|kiedys|wenn|falls|"
    r"hvis|om|si|se|kalau|jika|kung|vielleicht|kanskje|kanske|może|moze|forse|quizás|quizas|talvez|"
    r"peut-être|misschien|mungkin|baka|would|if|used\s+to|not|never|no\s+longer|wollte|würde|wäre|"
    r"quería|queria|vorrei|voudrais|gostaria|chciał\w*|chcę|chce|möchte|mochte|will|want|wants)(?![\w'])"
)
DIET_WORDS = re.compile(r"(?i)(?:v|w)[eé][gj](?:e|é)t|(?:v|w)[eé]g[aä]n")
# Each of them holds one of these words (or a Turkish case ending after an apostrophe): a message with none of
# them skips the whole group, one search instead of a dozen per clause (cost, not meaning: the group's results
# are the same).
CODE_SWITCH_GATE = re.compile(
    r"(?i)'[dt]|l[ıiuü]y[ıiuü]m|\d{1,2}\s*+-?(?:sal|su)|(?<![^\W\d_])(?:arbeit|schaffe|werk|jobb|arbeider|arbetar|arbejder|vinn|"
    r"pracuj|radim|delam|lucrez|rabotayu|pratsyuyu|travaille|bosse|trabaj|trabalh|treball|traball|lavoro|kerja|bekerja|"
    r"nagtatrabaho|nina|nafanya|fanya|douleu|doulev|oved|nghề|làm|labor|punoj|travay|ngisebenza|vivimos|radic|resid|résid|moro|"
    r"vivemos|visc|vivim|vis|habit|vit|vivons|abitiamo|viviamo|wohn|leb|wonen|woon|bor|mieszkam|bydl|žij|zij|bývam|byvam|živim|"
    r"zivim|locui|trăiesc|traiesc|stau|zhivu|zhyvu|jetoj|zo|gar|tinggal|menetap|domisili|berdomisili|nagpuyo|nakatira|loĝas|"
    r"rete|abite|zhu|zhù|ngihlala|ndihlala|zaune|gbe|ngbe|chónaí|elan|zendegi|bin|jeg|jag|eg|let|lat|rokov|roků|roku|godin|ani|"
    r"anys|anos|gadi|gadu|aastat|chron|xron|vjeç|vjec|umur|usia|tahun|thn|jahre|jaar|år|ans|urte|saalam|salame|soy|sono|sou|suis|"
    r"sunt|sóc|son|faccio|faço|faco|hago|veg|weg|vég|thaki|thakchi|iruk|vasik|bizi)"
)
# Emoji and pictographs end a sentence as a full stop would ("…a kitten 🐱 her name is Mango").
EMOJI = re.compile(
    "[\u2600-\u27bf\U0001f000-\U0001faff][\u2600-\u27bf\U0001f000-\U0001faff\ufe0f\u200d\\s]*+"
)
# Before a clause, these make the rest of the sentence fiction, quotation or someone else's words.
FRAMES = re.compile(
    r"\b(?:pretend|imagine|suppose|(?<!long\s)story(?!\s+short)|role-?play|says?(?!\s+(?:hi|hello)\b)|said|tells?|told|write|quote|if|"
    r"translate|rewrite|rephrase|paraphrase|proofread|summari[sz]e|saying|claiming|pretending|"
    r"thinks?|thought|believes?|assumes?|wants?|wish(?:es)?|hopes?|expects?|"
    r"would|maybe|perhaps|joking|kidding|hypothetically|"
    r"let's\s+play|play\s+a\s+game|act\s+as|in\s+character|scenario)\b",
    re.IGNORECASE,
)  # role-play
JOB_PART_TAIL = re.compile(r"\s+(?:at|in|for|from|with|near|dito)\s.*$")
