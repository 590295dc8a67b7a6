"""Schema-constrained decoding of Structured-First reports (docs/model.md, "Constrained generation").

A `target: json` model decodes under a grammar compiled by xgrammar from the report schema
(structured_report.schema.json) narrowed to what the report format writes: finding names from the
vocabulary, probability 1-3, levels from the vocabulary or null, location (and size) text or null,
the separators of `StructuredReport.to_json`. Every token the grammar cannot accept is masked, and
EOS is allowed only once the report is complete, so a finished output is a schema-valid report.

Beam search reorders and forks hypotheses between steps, so a matcher per batch row (xgrammar's own
transformers processor) loses track of them; `ReportConstraint` instead keys the grammar state by
the generated prefix itself and forks the parent's state for each new prefix.
"""

from __future__ import annotations

import copy
import json
import string
from dataclasses import dataclass
from functools import cache
from typing import Any

import torch
import xgrammar as xgr
from transformers import LogitsProcessor, PreTrainedTokenizerBase

from srrg import vocab
from srrg.report import SCHEMA_PATH

# the separators of json.dumps' default output, which StructuredReport.to_json (the target) writes
SEPARATORS = (", ", ": ")
# a text as plain_spelling leaves it (lower case, single spaces, no space at either end), without
# quotes or backslashes, so the JSON string holds no escape
TEXT_PATTERN = r"^[a-z0-9,.;:()/'-]+( [a-z0-9,.;:()/'-]+)*$"


def finding_names() -> list[str]:
    """The vocabulary's canonical finding names (the only names a constrained report can use)."""
    return list(vocab.findings())


def finding_levels() -> list[str]:
    """The levels the vocabulary writes into reports, sorted."""
    return sorted(set(vocab.severity_map().values()))


@cache
def report_schema() -> dict[str, Any]:
    """The packaged report schema narrowed to what to_json writes from vocabulary terms: the four
    finding keys of Finding.to_dict always present (size optional), names and levels as enums,
    probability 1-3, plain-spelled texts (TEXT_PATTERN; their length is bounded by the token budget,
    ReportConstraint), each list at most one entry per name."""
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    names = finding_names()
    positive, negative = schema["properties"]["positive"], schema["properties"]["negative"]
    finding = positive["items"]
    text = {"type": ["string", "null"], "pattern": TEXT_PATTERN}
    finding["properties"] = {
        "name": {"enum": names},
        "probability": {"enum": [1, 2, 3]},
        "level": {"enum": [*finding_levels(), None]},
        "location": text,
        "size": copy.deepcopy(text),
    }
    finding["required"] = ["name", "probability", "level", "location"]
    positive["maxItems"] = negative["maxItems"] = len(names)
    negative["items"] = {"enum": names}
    return schema


@dataclass(frozen=True)
class ReportGrammar:
    """The compiled report grammar over one tokenizer, and which tokens hold an odd number of
    quotes (the closer must know whether a prefix ends inside a string)."""

    compiled: xgr.CompiledGrammar
    odd_quotes: frozenset[int]


def compile_report_grammar(tok: PreTrainedTokenizerBase, vocab_size: int) -> ReportGrammar:
    """The report grammar over `tok`'s tokens; vocab_size is the width of the model's logits (it
    may exceed the tokenizer's length: the extra ids are never allowed)."""
    info = xgr.TokenizerInfo.from_huggingface(tok, vocab_size=vocab_size, stop_token_ids=[tok.eos_token_id])
    compiler = xgr.GrammarCompiler(info, max_threads=1)
    compiled = compiler.compile_json_schema(report_schema(), any_whitespace=False, separators=SEPARATORS)
    odd = frozenset(i for i, text in enumerate(info.decoded_vocab) if text.count(b'"') % 2)
    return ReportGrammar(compiled, odd)


# what the closer tries, in this order, where the grammar leaves a choice (docs/model.md): inside a
# string, end it (or, in a name or level, spell on); outside, end the list or object, then null
# or probability 1, and open a string only where nothing else is allowed
_SPELLING = [*string.ascii_lowercase, *string.digits, " ", *",.;:()/'-"]
IN_STRING = ['"', *_SPELLING]
OUTSIDE = ["]", "}", "null", "1", '"', ",", " ", "{", "[", ":", *_SPELLING]


def closing_string(state: xgr.GrammarMatcher, in_string: bool, limit: int = 4096) -> str | None:
    """A short text that completes the report from `state` (state is not changed): the forced
    text wherever the grammar allows one continuation, else the first of IN_STRING or OUTSIDE it
    accepts. Not always the shortest completion, but a completion; None at a dead end."""
    probe, out = state.fork(), []
    for _ in range(limit):
        if probe.is_completed():
            return "".join(out)
        forced = probe.find_jump_forward_string()
        step = forced if forced and probe.accept_string(forced) else None
        if step is None:
            step = next((c for c in (IN_STRING if in_string else OUTSIDE) if probe.accept_string(c)), None)
        if step is None:
            return None
        out.append(step)
        in_string ^= step.count('"') % 2 == 1
    return None


class ReportConstraint(LogitsProcessor):
    """Masks the tokens after which the report grammar cannot be completed within the token budget.

    States are keyed by the generated ids (the ids after the first call's input length); a new
    prefix forks its parent's state and accepts its last token. A prefix that the grammar refused
    (beam search keeps candidates of score -inf when fewer tokens are allowed than it ranks) gets
    every token masked, so it stays at -inf and is never returned over a live hypothesis; so does
    a prefix that already ended in EOS (beam search may keep one running when the other candidates
    are at -inf). Only the current step's states (and the children built to check them) are
    kept. One instance serves one `generate` call.

    The budget (docs/model.md): the cost of a state is the tokens of its closing string plus EOS.
    Of each hypothesis's grammar-allowed tokens, its `width` best (the most beam search can take
    from one hypothesis) are kept only where the cost after them fits the tokens left; the first
    token of the closing string always fits when the state does, so a hypothesis that started
    inside the budget ends, with EOS, inside it.
    """

    def __init__(self, grammar: ReportGrammar, tok: PreTrainedTokenizerBase, budget: int, width: int) -> None:
        self.grammar, self.tok, self.budget, self.width = grammar, tok, budget, width
        self.start: int | None = None
        self.states: dict[tuple[int, ...], xgr.GrammarMatcher | None] = {}
        self.in_string: dict[tuple[int, ...], bool] = {(): False}
        self.costs: dict[str, list[int]] = {}  # closing string -> its tokens
        self.children: dict[tuple[int, ...], xgr.GrammarMatcher] = {}  # states _fits built
        self.closings: dict[tuple[int, ...], tuple[list[int], int] | None] = {}

    def _state(self, prefix: tuple[int, ...]) -> xgr.GrammarMatcher | None:
        if prefix in self.states:
            return self.states[prefix]
        if prefix in self.children:
            return self.children[prefix]
        if not prefix:
            return xgr.GrammarMatcher(self.grammar.compiled)
        parent = self.states.get(prefix[:-1])
        if parent is None or parent.is_terminated():
            return None
        child = parent.fork()
        return child if child.accept_token(prefix[-1]) else None

    def _quoted(self, prefix: tuple[int, ...]) -> bool:
        """Whether the text of `prefix` ends inside a string (its parent's answer, flipped by a
        token with an odd number of quotes)."""
        if prefix not in self.in_string:
            self.in_string[prefix] = self._quoted(prefix[:-1]) ^ (prefix[-1] in self.grammar.odd_quotes)
        return self.in_string[prefix]

    def _closing(self, prefix: tuple[int, ...], state: xgr.GrammarMatcher) -> tuple[list[int], int] | None:
        """(the closing string's tokens, its cost with EOS), None at a dead end; remembered for
        the step's states and the children _fits checked (the next step's states are among them)."""
        if prefix not in self.closings:
            self.closings[prefix] = self._close(prefix, state)
        return self.closings[prefix]

    def _close(self, prefix: tuple[int, ...], state: xgr.GrammarMatcher) -> tuple[list[int], int] | None:
        if state.is_completed():
            return [], 1
        text = closing_string(state, self._quoted(prefix))
        if text is None:
            return None
        if text not in self.costs:
            self.costs[text] = self.tok(text, add_special_tokens=False)["input_ids"]
        ids = self.costs[text]
        return ids, len(ids) + 1

    def _fits(self, prefix: tuple[int, ...], state: xgr.GrammarMatcher, token: int, left: int) -> bool:
        """Whether `token` after `state` leaves a report that closes within `left` - 1 tokens."""
        if token == self.tok.eos_token_id:
            return True
        child = state.fork()
        if not child.accept_token(token):
            return False
        self.children[(*prefix, token)] = child
        closing = self._closing((*prefix, token), child)
        return closing is not None and closing[1] <= left - 1

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if self.start is None:
            self.start = input_ids.shape[1]
        left = self.budget - (input_ids.shape[1] - self.start)
        prefixes = [tuple(row) for row in input_ids[:, self.start :].tolist()]
        states = {p: self._state(p) for p in dict.fromkeys(prefixes)}
        self.states, self.children = states, {}
        self.closings = {p: self.closings[p] for p in states if p in self.closings}
        self.in_string = {p: self._quoted(p) for p in states}
        mask = xgr.allocate_token_bitmask(len(prefixes), scores.shape[-1])
        live = []
        for i, prefix in enumerate(prefixes):
            state = states[prefix]
            if state is not None and not state.is_terminated():
                state.fill_next_token_bitmask(mask, i)
                live.append(i)
        out = scores.clone()
        xgr.apply_token_bitmask_inplace(out, mask.to(out.device))
        # every row's best tokens from one topk, read as Python lists: a tensor operation per row
        # and per token cost as much as the grammar's work at small models (docs/model.md)
        values, best = (t.tolist() for t in torch.topk(out, min(self.width, out.shape[-1]), dim=-1))
        rows, tokens = [], []
        for i in live:
            state = states[prefixes[i]]
            closing = self._closing(prefixes[i], state)
            if closing is not None:
                rows.append(i)
                tokens.append(closing[0][0] if closing[0] else self.tok.eos_token_id)
            for value, token in zip(values[i], best[i]):
                if value > -float("inf") and self._fits(prefixes[i], state, token, left):
                    rows.append(i)
                    tokens.append(token)
        keep = torch.zeros_like(out, dtype=torch.bool)
        keep[rows, tokens] = True
        return out.masked_fill(~keep, -float("inf"))
