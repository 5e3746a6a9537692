"""Protected patterns: the spans of raw text that a tokenizer should keep
whole in any language (URLs, e-mail addresses, @mentions, #hashtags,
emoticons, emoji sequences, numbers, times and dates with separators),
found by one compiled regular expression so that finding them costs a
small fraction of tokenizing.

A span never contains whitespace and never ends in a sentence's period,
comma or closing bracket that is not part of it.  Which kinds a tokenizer
actually protects is for training to decide: :data:`KINDS` names them so
that it can count per kind whether its training data keeps them whole.

Time is linear in the text, by two means.  First, no alternative can
restart inside a run it would consume: each repetition over a separator
(host labels and dots, digit groups and ``,``/``.``/``'``/``-``/``/``,
local parts of e-mail addresses, hashtag words) is guarded by a
lookbehind that forbids a start right after a character of the same run
(a number never starts right after ``.``, ``,``, ``:``, ``/``, a digit
and ``-`` or, for groups of ``'``, a digit and ``'``), and the other
repetitions (emoticons, emoji sequences) never fail after their first
character or start only after whitespace; so each start explores its own
run once.  Second, as a bound that holds whatever the pattern: a piece
(from a space or line break to the next whitespace) longer than :data:`WINDOW` characters is searched in
windows of at most WINDOW characters that overlap by :data:`MAX_SPAN`, a
span found in a window is kept only when it ends at least MAX_SPAN
characters before the window's end (or at the piece's end), and the next
window begins at the first span not kept (unless it began the window), or
else MAX_SPAN before the window's end.  So every two windows advance by
at least WINDOW - MAX_SPAN characters: each character is searched at most
2 * WINDOW / (WINDOW - MAX_SPAN) times, each search within WINDOW
characters.  Pieces of at most WINDOW characters (all of ordinary text)
get exactly the spans of the whole pattern; in longer pieces a span
longer than MAX_SPAN characters (a URL of ten thousand characters) may be
missed or found in part.
"""
import bisect
import re

import numpy as np

#: The kinds of protected spans; a span's kind is its index here.
KINDS = ("url", "email", "mention", "hashtag", "emoticon", "emoji", "number", "time", "date", "digits")

# ---------------------------------------------------------------- the pieces

# characters of a URL: not whitespace, quotes, brackets or the scripts
# written without spaces (a URL in Chinese or Japanese text runs into them)
_NOT_IN_URL = "\\s<>\"'()\\[\\]{}\u00ab\u00bb\u2018-\u201f\u2026\u2039\u203a\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef"
_U = f"[^{_NOT_IN_URL}]"
_U_END = f"[^{_NOT_IN_URL}.,;:!?*]"          # the last character: no sentence punctuation
_PARENS = f"\\({_U}*\\)"                      # a balanced (...) inside a URL (Wikipedia)
_URL_REST = f"(?:{_U}|{_PARENS})*(?:{_U_END}|{_PARENS})"
# top-level domains recognised without a scheme or www: lower case only, so
# "end.It" and "e.g." are no domains, and none that is an English word
# (at, be, in, it, me, no, us: "good.at") or a file's extension (pl)
_TLDS = ("com|org|net|edu|gov|mil|int|info|biz|io|ai|app|dev|co|uk|ca|au|nz|ie|de|ch|fr|nl|"
         "es|pt|br|mx|ar|ru|ua|cz|se|dk|fi|tr|gr|jp|cn|kr|tw|hk|eu|tv|ly|gl")
_HOST = "[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_PORT_PATH = f"(?::\\d{{1,5}})?(?:[/?#](?:{_URL_REST})?)?"

_URL = "|".join([
    f"(?<![A-Za-z0-9])[A-Za-z][A-Za-z0-9+.-]{{1,15}}://{_URL_REST}",              # with a scheme
    f"(?<![A-Za-z0-9.@-])www\\d{{0,3}}\\.{_HOST}(?:\\.{_HOST})+{_PORT_PATH}",     # www.
    f"(?<![A-Za-z0-9.@/-])(?:{_HOST}\\.)+(?:{_TLDS})(?![A-Za-z0-9_-]){_PORT_PATH}",  # a known top-level domain
])
_EMAIL = ("(?<![A-Za-z0-9._%+-])(?:mailto:)?[A-Za-z0-9](?:[A-Za-z0-9._%+-]*[A-Za-z0-9_%+-])?"
          f"@{_HOST}(?:\\.{_HOST})*\\.[A-Za-z]{{2,}}(?![A-Za-z0-9-])")

# letters and digits of any script, and the marks that some scripts write
# their words with (Devanagari, Thai, Arabic vowels ...), and ZWNJ/ZWJ
_WORD = "[\\w\u0300-\u036f\u0483-\u0489\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed" \
        "\u0900-\u0dff\u0e00-\u0eff\u1000-\u109f\u200c\u200d\u3099\u309a]"
_LETTER = "[^\\W\\d_]"
_MENTION = f"(?<![\\w@.#&]){'@'}[^\\W\\d]{_WORD}*"
_HASHTAG = f"(?<![\\w#&@%$*]){'#'}(?={_WORD}*?{_LETTER}){_WORD}+"

# emoticons: before whitespace, the end or punctuation; after whitespace or
# the start, or for the common faces :) :( :D :P (with a nose or a tear)
# also right after a letter or a sentence's end ("kiva:)", "lisää.:)");
# never after a digit or other punctuation, never reversed, so prose such
# as "(see 3):", "list:(a)" and ratios such as 1:3 give none
_ATTACHED = "[:;=][-^']?[)(DPp]|:'-?[()]"
_EMOTICON_BODY = "|".join([
    "[:;=][-^']?(?:\\)|\\(|D+|P|p|O|o|\\]|\\[|/|\\\\|\\||\\*|3|S|\\$|@)",     # :-) ;) :D =P :'( :/ :3
    ":'-?[()]",
    "</?3+",                                                                 # <3 </3
    "\\^_*\\^|\\^\\.\\^|-_+-|[oO0]_+[oO0]|[Tt]_+[Tt]|>_+<|>\\.<",            # ^_^ ^^ -_- o_O T_T >_<
    "[xX]D+",                                                                # XD
    "\u00af\\\\_\\(\u30c4\\)_/\u00af",                                       # the shrug
])
_EMOTICON = (f"(?:(?<!\\S)(?:{_EMOTICON_BODY})|(?:(?<=[^\\W\\d_])|(?<=[.!?,]))(?:{_ATTACHED}))"
             f"(?=$|[\\s.,!?;:\"')\\]}}])")

# emoji: a pictograph with its variation selector, skin tone and tags,
# ZWJ sequences of them, flags (pairs of regional indicators) and keycaps
_PICTOGRAPH = "[\u2600-\u27bf\u2b00-\u2bff\u2300-\u23ff\U0001f000-\U0001f1e5\U0001f200-\U0001faff]"
_EMOJI_ONE = (f"(?:[\U0001f1e6-\U0001f1ff]{{2}}|[0-9#*]\ufe0f?\u20e3"
              f"|{_PICTOGRAPH}[\ufe0e\ufe0f]?[\U0001f3fb-\U0001f3ff]?[\U000e0020-\U000e007f]*)")
_EMOJI = f"{_EMOJI_ONE}(?:\u200d{_EMOJI_ONE})*"

# numbers with separators: whole runs of digit groups only (a run that fits
# none of these, such as 1,2,3 or an IP address, gives no span)
_NUM_START = "(?<![\\dA-Za-z_.,:/])(?<!\\d-)"   # after a Chinese or Japanese character too: 是3.5元
_AFTER_GROUP = "(?<!\\d')"      # digit groups of ' (1'000'000) never restart inside their run
_NUM_END = "(?!\\d|[.,:/'-]\\d)"       # a letter may follow: 7:30pm, Finnish 2.0:n
_DAY = "(?:0?[1-9]|[12]\\d|3[01])"
_MONTH = "(?:0?[1-9]|1[0-2])"
_DATE = "|".join([f"\\d{{4}}-{_MONTH}-{_DAY}",                          # 2026-11-27
                  f"{_DAY}\\.{_MONTH}\\.(?:\\d{{4}}|\\d{{2}})",            # 27.11.2026 (not a version: 5.0.2195)
                  f"{_DAY}/{_DAY}/(?:\\d{{4}}|\\d{{2}})"])                    # 11/27/2026, 27/11/26
_TIME = "(?:[01]?\\d|2[0-4]):[0-5]\\d(?::[0-5]\\d)?(?:[.,]\\d+)?"
_DIGITS = "\\d+(?:[-/]\\d+)+"                # phone numbers, ranges, fractions, scores, 9/11
_NUMBER = "|".join(["\\d{1,3}(?:,\\d{3})+(?:\\.\\d+)?", "\\d{1,3}(?:\\.\\d{3})+(?:,\\d+)?",
                    f"{_AFTER_GROUP}\\d{{1,3}}(?:'\\d{{3}})+(?:\\.\\d+)?", "\\d+[.,]\\d+"])

#: The one pattern; the name of the group that matched is the kind.  The
#: order matters where two kinds start at one place: a URL or e-mail
#: address before the rest, an emoji (keycap 1️⃣, #️⃣) before a number or
#: hashtag, a date or time before a number.
PATTERN = re.compile("|".join([
    f"(?P<url>{_URL})",
    f"(?P<email>{_EMAIL})",
    f"(?P<emoji>{_EMOJI})",
    f"(?P<mention>{_MENTION})",
    f"(?P<hashtag>{_HASHTAG})",
    f"(?P<date>{_NUM_START}(?:{_DATE}){_NUM_END})",
    f"(?P<time>{_NUM_START}(?:{_TIME}){_NUM_END})",
    f"(?P<number>{_NUM_START}(?:{_NUMBER}){_NUM_END})",
    f"(?P<digits>{_NUM_START}(?:{_DIGITS}){_NUM_END})",
    f"(?P<emoticon>{_EMOTICON})",
]))

_KIND_OF_GROUP = {name: KINDS.index(name) for name in PATTERN.groupindex}

#: What every span holds somewhere (a character in its context), so that
#: :data:`PATTERN` runs only on the whitespace-separated pieces of text
#: that hold one: most text holds none.  One character class first, the
#: context after it, lets the engine skip other characters at C speed.
_TRIGGER_CHARS = "@#^\u00af\u20e3\u2300-\u23ff\u2600-\u27bf\u2b00-\u2bff\U0001f000-\U0001faff"
TRIGGER = re.compile(
    f"[{_TRIGGER_CHARS}:;=<>_0-9.D](?:(?<=[{_TRIGGER_CHARS}])"
    "|(?<=[:;=])(?=[-^']?[)(DPpOo\\]\\[/\\\\|*3S$@])|(?<=:)(?=')|(?<=\\d:)(?=\\d)"   # :-) :/ (and ://) :'( 10:30
    "|(?<=<)(?=/?3)|(?<=>)(?=[_.])|(?<=[-oO0Tt]_)"                        # <3 >_< >.< -_- o_O T_T
    "|(?<=\\d)(?=[.,'/-]\\d)"                                             # 1,000 3.14 2026-11-27 9/11
    f"|(?<=\\.)(?:(?<=www\\.)|(?:{_TLDS})(?![A-Za-z0-9_-]))"                # www. example.com
    "|(?<=[xX]D))")                                                        # XD
_SPACE = re.compile("\\s")
#: A whitespace-free piece longer than this is searched in windows (the
#: module's docstring): the work of one search is bounded by a constant.
WINDOW = 32768
#: How far windows overlap: spans up to about this long are found whole.
MAX_SPAN = 8192
_NONE = np.zeros(0, dtype=np.int64)         # what most text gets, shared: read-only
_NONE.flags.writeable = False


def protected_spans(text):
    """``(starts, ends, kinds)`` of the protected spans of the str ``text``:
    int64 arrays, sorted, non-overlapping, ``kinds`` indices into
    :data:`KINDS`; no span contains whitespace.  Text without any span
    (most text) gets three shared empty read-only arrays: no allocation."""
    if not isinstance(text, str):
        raise TypeError(f"protected_spans() takes a str, not {type(text).__name__}")
    first = TRIGGER.search(text)
    if first is None:
        return _NONE, _NONE, _NONE
    starts, ends, kinds = [], [], []
    kind_of, finditer, space, trigger = _KIND_OF_GROUP, PATTERN.finditer, _SPACE.search, TRIGGER.search
    done = 0                            # text[:done] is searched; text[done] is whitespace or done == 0
    t = first
    while t is not None:
        at = t.start()
        # the piece around the trigger, from a space (or where the last
        # piece ended) to the next whitespace: no span crosses either end,
        # and lookbehinds still see the text before it
        a = max(text.rfind(" ", done, at), text.rfind("\n", done, at), done)
        m = space(text, at)
        done = len(text) if m is None else m.start()
        while True:
            end = min(a + WINDOW, done)
            keep_before = done if end == done else end - MAX_SPAN     # a kept span ends by then
            restart = keep_before
            for m in finditer(text, a, end):
                if m.end() > keep_before:
                    if m.start() > a:
                        restart = m.start()     # searched again from its start, to be found whole
                    break
                starts.append(m.start())
                ends.append(m.end())
                kinds.append(kind_of[m.lastgroup])
            if end == done:
                break
            a = restart
        t = trigger(text, done)
    return (np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64), np.array(kinds, dtype=np.int64))


#: How a span lies among the tokens of annotated text (:func:`outcomes`).
OUTCOMES = ("whole", "inside", "split", "crossed")


def outcomes(text, tokens):
    """``(kinds, outcomes)`` of the protected spans of ``text`` against its
    gold ``tokens``, (start, end) character offsets in order: each span is
    "whole" when it is one token, "inside" when it lies inside one longer
    token (Finnish ``2.0:n``), "split" when it is several whole tokens,
    "crossed" otherwise; indices into :data:`KINDS` and :data:`OUTCOMES`.
    Training counts them per kind: keeping a kind whole agrees with the
    data where its spans are whole or inside."""
    starts, ends, kinds = protected_spans(text)
    firsts = {a for a, _ in tokens}
    lasts = {b for _, b in tokens}
    exact = set(tokens)
    token_starts = [a for a, _ in tokens]
    found = []
    for a, b in zip(starts.tolist(), ends.tolist()):
        if (a, b) in exact:
            found.append(0)
            continue
        i = bisect.bisect_right(token_starts, a) - 1          # the token starting at or before the span
        if i >= 0 and tokens[i][1] >= b:
            found.append(1)
        elif a in firsts and b in lasts:
            found.append(2)
        else:
            found.append(3)
    return kinds, np.array(found, dtype=np.int64)


#: Training protects a kind where at least this share of its spans in the
#: training data agrees with keeping it whole, over at least this many.
KEEP_SHARE = 0.9
KEEP_MIN_COUNT = 3


def kept_kinds(text, tokens, min_share=KEEP_SHARE, min_count=KEEP_MIN_COUNT):
    """The names of the kinds (in :data:`KINDS` order) that the gold
    ``tokens`` of ``text`` do not split: a kind seen ``min_count`` times or
    more whose spans are whole or inside one token in at least
    ``min_share`` of them, or one seen less often and never split (a kind
    the data never shows stays whole, as in every language).  EWT splits
    year ranges of ``digits``, Japanese splits decimals: those kinds a
    tokenizer trained on them leaves to its model."""
    kinds, found = outcomes(text, tokens)
    kept = []
    for k, name in enumerate(KINDS):
        mine = found[kinds == k]
        whole = int((mine <= 1).sum())
        if whole == len(mine) or (len(mine) >= min_count and whole >= min_share * len(mine)):
            kept.append(name)
    return tuple(kept)


class Protector:
    """A tokenizer's ``protect`` hook: the :func:`protected_spans` of a text
    of the named kinds only.  ``kinds``: names from :data:`KINDS`."""

    def __init__(self, kinds):
        unknown = [k for k in kinds if k not in KINDS]
        if unknown:
            raise ValueError(f"kinds: {unknown[0]!r} is none of {', '.join(KINDS)}")
        self.kinds = tuple(k for k in KINDS if k in kinds)
        self._ids = np.array([KINDS.index(k) for k in self.kinds], dtype=np.int64)
        self._all = len(self.kinds) == len(KINDS)

    def __call__(self, text):
        starts, ends, kinds = protected_spans(text)
        if self._all or not len(starts):
            return starts, ends, kinds
        keep = np.isin(kinds, self._ids)
        return starts[keep], ends[keep], kinds[keep]
