"""Schema-constrained generation (srrg.model.constrained; docs/model.md, "Constrained generation")."""

from __future__ import annotations

import json

import jsonschema
import pytest
import torch
import xgrammar as xgr
from model_fixtures import tiny_generator

from srrg import vocab
from srrg.model.constrained import ReportConstraint, closing_string, compile_report_grammar, report_schema
from srrg.model.llm import load_tokenizer
from srrg.model.network import ReportGenerator
from srrg.model.words import build_vocab
from srrg.report import SCHEMA_PATH, VALID, parse_report
from srrg.settings.model import FrozenLLMConfig, InferConfig

torch.set_num_threads(1)
REPORT_SCHEMA = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
EMPTY = '{"positive": [], "negative": []}'


def tiny_net(arch: str = "llm", vocab_words: list[str] | None = None) -> ReportGenerator:
    return tiny_generator(arch, vocab=vocab_words, baseline={"min_word_count": 1}, max_target_tokens=160)


@pytest.fixture(scope="module")
def llm() -> ReportGenerator:
    return tiny_net()


def matcher(net: ReportGenerator, text: str = "") -> xgr.GrammarMatcher:
    m = xgr.GrammarMatcher(net.report_grammar().compiled)
    assert m.accept_string(text) if text else True
    return m


def assert_schema_report(text: str) -> None:
    """Valid under structured_report.schema.json, names and levels from the vocabulary."""
    obj = json.loads(text)
    jsonschema.validate(obj, REPORT_SCHEMA)
    names, levels = set(vocab.findings()), set(vocab.severity_map().values())
    assert {f["name"] for f in obj["positive"]} <= names and set(obj["negative"]) <= names
    assert {f["level"] for f in obj["positive"]} <= levels | {None}
    assert {f["probability"] for f in obj["positive"]} <= {1, 2, 3}


@pytest.mark.slow
def test_tiny_random_llm_writes_schema_valid_reports_for_50_images_with_3_beams(llm: ReportGenerator) -> None:
    """Without the grammar this random model writes character soup (unparseable); a grammar or
    budget bug (a string left open, a name outside the vocabulary, a report cut at the budget)
    fails here."""
    torch.manual_seed(1)
    images = torch.randn(50, 3, 32, 32)
    cfg = InferConfig(num_beams=3, num_return_sequences=3, max_new_tokens=96)
    out = [c for i in range(0, 50, 10) for c in llm.generate(images[i : i + 10], cfg)]
    assert len(out) == 50
    for candidates in out:
        assert len(candidates) == 3
        for text in candidates:
            assert_schema_report(text)
            assert len(llm.tokenizer(text, add_special_tokens=False)["input_ids"]) <= 95  # EOS is the 96th
            assert parse_report(text)[1] in {"valid", "repaired"}
    unconstrained = llm.generate(images[:5], InferConfig(num_beams=3, max_new_tokens=96, constrained=False))
    assert all(parse_report(c[0])[1] == "unparseable" for c in unconstrained)


def test_constrained_off_is_plain_beam_search(llm: ReportGenerator) -> None:
    """constrained: false must be the search of before the grammar existed: transformers' beam
    search on the same prompt, token for token (a processor left on, or a changed budget, fails)."""
    torch.manual_seed(2)
    images = torch.randn(2, 3, 32, 32)
    got = llm.generate(images, InferConfig(num_beams=3, num_return_sequences=2, max_new_tokens=24, constrained=False))
    embeds = llm._prompt_embeds(llm.image_tokens(images))
    ids = llm.llm.generate(
        inputs_embeds=embeds,
        attention_mask=torch.ones(embeds.shape[:2], dtype=torch.long),
        max_new_tokens=24,
        num_beams=3,
        num_return_sequences=2,
        do_sample=False,
        pad_token_id=llm.tokenizer.pad_token_id,
        eos_token_id=llm.tokenizer.eos_token_id,
    )
    texts = [t.strip() for t in llm.tokenizer.batch_decode(ids, skip_special_tokens=True)]
    assert got == [texts[0:2], texts[2:4]]


def test_sentences_targets_are_never_constrained() -> None:
    """The grammar is for json targets only: a Sentence-Direct model decodes as before."""
    net = tiny_generator("llm", target="sentences")
    images = torch.randn(1, 3, 32, 32)
    on = net.generate(images, InferConfig(num_beams=2, max_new_tokens=12))
    off = net.generate(images, InferConfig(num_beams=2, max_new_tokens=12, constrained=False))
    assert on == off


def test_closing_strings_written_out(llm: ReportGenerator) -> None:
    """The closer ends the open string, object and lists in the order the format writes them; a
    wrong CLOSE_ORDER (opening a new finding, typing a level) gives a longer text."""
    assert closing_string(matcher(llm), False) == EMPTY
    assert closing_string(matcher(llm, '{"positive": [], "negative": ["pneumothorax"'), False) == "]}"
    # inside a name: the first letter in a-z order that spells a name on
    assert closing_string(matcher(llm, '{"positive": [], "negative": ["pneumo'), True) == 'mediastinum"]}'

    inside = '{"positive": [{"name": "atelectasis", "probability": 2, "level": null, "location": "in the le'
    assert closing_string(matcher(llm, inside), True) == '"}], "negative": []}'
    assert closing_string(matcher(llm, '{"positive": [{"name": "atelectasis", "probability": '), False) == (
        '1, "level": null, "location": null}], "negative": []}'
    )
    assert closing_string(matcher(llm, EMPTY), False) == ""


def test_grammar_refuses_what_the_format_never_writes(llm: ReportGenerator) -> None:
    """Probability outside 1-3, a name outside the vocabulary, upper case or a double space in a
    location, other separators: each refused (a schema that kept the packaged schema's free
    strings or any whitespace accepts them)."""
    start = '{"positive": [{"name": "atelectasis", "probability": '
    assert not matcher(llm).accept_string(start + "4")
    assert not matcher(llm).accept_string('{"positive": [{"name": "zebra stripes"')
    assert not matcher(llm).accept_string(start + '1, "level": null, "location": "Left"')
    assert not matcher(llm).accept_string(start + '1, "level": null, "location": "left  lung"')
    assert not matcher(llm).accept_string('{"positive":[]')
    assert not matcher(llm).accept_string(start + '1, "level": "huge"')
    good = start + '2, "level": "mild", "location": "in the left lower lobe"}], "negative": ["pneumothorax"]}'
    m = matcher(llm, good)
    assert m.is_completed()
    assert parse_report(good)[1] == VALID


def test_a_batch_is_masked_as_each_of_its_rows_alone(llm: ReportGenerator) -> None:
    """ReportConstraint reads every row's best tokens from one topk and sets the kept tokens in one
    assignment: each row of a batch must get exactly what the same row gets in a batch of its own
    (rows mixed up, or a kept token set in the wrong row, fails), through a run of steps with two
    live reports, a refused prefix and a duplicate."""
    tok = llm.tokenizer
    texts = [
        '{"positive": [{"name": "atelectasis", "probability": 2',
        '{"positive": [], "negative": ["pneumothorax", "edema"]}',
        'x{"positive": [], "negative": []}',  # refused at its first token: masked from then on
        '{"positive": [{"name": "atelectasis", "probability": 2',
    ]
    steps = 24
    rows = [tok(t, add_special_tokens=False)["input_ids"][:steps] for t in texts]
    assert min(len(r) for r in rows) == steps
    prompt = torch.full((len(rows), 3), tok.eos_token_id, dtype=torch.long)
    ids = torch.cat([prompt, torch.tensor(rows)], dim=1)
    grammar = llm.report_grammar()
    batched = ReportConstraint(grammar, tok, budget=64, width=6)
    alone = [ReportConstraint(grammar, tok, budget=64, width=6) for _ in rows]
    gen = torch.Generator().manual_seed(4)
    for step in range(steps + 1):
        scores = torch.randn(len(rows), len(tok), generator=gen)
        got = batched(ids[:, : 3 + step], scores)
        for i, single in enumerate(alone):
            assert torch.equal(got[i : i + 1], single(ids[i : i + 1, : 3 + step], scores[i : i + 1])), (step, i)
        kept = torch.isfinite(got).sum(dim=1).tolist()
        assert kept[0] >= 1 and kept[1] >= 1 and kept[0] == kept[3]  # the live reports keep tokens
        assert kept[2] == (0 if step >= 1 else kept[0])  # the refused prefix keeps none
        assert max(kept) <= 6 + 1  # at most the width, and the closing string's first token


def test_the_budget_ends_every_report_and_a_budget_below_the_empty_report_cuts_it(llm: ReportGenerator) -> None:
    """Budget 33 = the empty report (32 characters, one token each) + EOS: the only report that
    fits, so it must come out whole; budget 20 cannot hold any report: the output is the closing
    text cut at 20 tokens (never an exception), and parse_report calls it what it is."""
    images = torch.randn(2, 3, 32, 32)
    assert llm.generate(images, InferConfig(num_beams=3, max_new_tokens=33)) == [[EMPTY], [EMPTY]]
    cut = llm.generate(images, InferConfig(num_beams=3, max_new_tokens=20))
    assert [c[0] for c in cut] == [EMPTY[:20]] * 2
    assert parse_report(cut[0][0])[1] != VALID


def test_report_schema_narrows_the_packaged_schema() -> None:
    """Every report the narrowed schema accepts is valid under the packaged one, and the narrowed
    one names the vocabulary (a schema built from something else drifts from the report format)."""
    schema = report_schema()
    finding = schema["properties"]["positive"]["items"]
    assert finding["properties"]["name"]["enum"] == list(vocab.findings())
    assert finding["properties"]["probability"]["enum"] == [1, 2, 3]
    assert finding["required"] == ["name", "probability", "level", "location"]
    assert schema["required"] == REPORT_SCHEMA["required"]


def test_baseline_word_vocabulary_is_left_unconstrained() -> None:
    """A word vocabulary of the training targets cannot spell every closing text (here: no piece
    for `"}], "negative": []}` alone), so its search stays as before; an llm-vocabulary baseline
    gets the grammar like the LLM."""
    reports = [
        '{"positive": [{"name": "atelectasis", "probability": 2, "level": null, "location": "in the left lung"}], '
        '"negative": ["pneumothorax"]}',
        '{"positive": [], "negative": ["pneumothorax", "pleural effusion"]}',
    ]
    words = tiny_net("baseline", build_vocab(reports, 1))
    assert not words.constrainable
    images = torch.randn(2, 3, 32, 32)
    on = words.generate(images, InferConfig(num_beams=3, max_new_tokens=20))
    assert on == words.generate(images, InferConfig(num_beams=3, max_new_tokens=20, constrained=False))
    chars = tiny_generator("baseline", baseline={"vocab": "llm"}, max_target_tokens=64)
    assert chars.constrainable
    for (text,) in chars.generate(images, InferConfig(num_beams=3, max_new_tokens=64)):
        assert_schema_report(text)


def test_grammar_width_is_the_logits_width() -> None:
    """Logits wider than the tokenizer (padded embedding tables) are masked past its end."""
    tok = load_tokenizer(FrozenLLMConfig(name="tiny"))
    grammar = compile_report_grammar(tok, len(tok) + 7)
    assert grammar.odd_quotes == {tok.convert_tokens_to_ids('"')}
    mask = xgr.allocate_token_bitmask(1, len(tok) + 7)
    xgr.GrammarMatcher(grammar.compiled).fill_next_token_bitmask(mask, 0)
    allowed = [i for i in range(len(tok) + 7) if (mask[0, i // 32] >> (i % 32)) & 1]
    assert allowed == [tok.convert_tokens_to_ids("{")]
