"""Gazetteers: lists of multi-token names per type, read from files and
matched longest first in a sentence, for the span tagger's ``gaz`` feature."""
from __future__ import annotations

from ..text.sources import read_lines


def read_gazetteer(source):
    """Entries of a gazetteer (a path, or lines): one per line, tokens
    separated by whitespace; blank lines and lines starting with ``#``
    are skipped."""
    entries = []
    for line in read_lines(source, "the gazetteer"):
        line = line.strip()
        if line and not line.startswith("#"):
            entries.append(" ".join(line.split()))
    return entries


class Gazetteer:
    """Longest-match lookup of multi-token entries, per type."""

    def __init__(self, lists):
        self.lists = {t: sorted(set(e)) for t, e in sorted(lists.items())}
        self.index = {}        # first token -> max length, per type
        self.entries = {}
        for typ, entries in self.lists.items():
            ents = set()
            first = {}
            for e in entries:
                toks = tuple(e.split(" "))
                ents.add(toks)
                first[toks[0]] = max(first.get(toks[0], 0), len(toks))
            self.entries[typ] = ents
            self.index[typ] = first

    def tags(self, words):
        """Per token: the gazetteer tags covering it ("-" when none)."""
        n = len(words)
        marks = [[] for _ in range(n)]
        for typ in self.lists:
            ents, first = self.entries[typ], self.index[typ]
            i = 0
            while i < n:
                longest = first.get(words[i], 0)
                found = 0
                for L in range(min(longest, n - i), 0, -1):
                    if tuple(words[i:i + L]) in ents:
                        found = L
                        break
                if found:
                    if found == 1:
                        marks[i].append("S-" + typ)
                    else:
                        marks[i].append("B-" + typ)
                        for j in range(i + 1, i + found - 1):
                            marks[j].append("I-" + typ)
                        marks[i + found - 1].append("E-" + typ)
                    i += found
                else:
                    i += 1
        return ["|".join(m) if m else "-" for m in marks]
