"""Beam search (`ReportGenerator.generate`) against brute-force enumeration on a tiny model.

A hook on the output layer restricts the model to three tokens ("a", "b", "c") and sharpens the
logits, so every continuation has exactly L tokens and there are 3^L of them: few enough to score
them all. With equal lengths any length normalization ranks sequences by total log-probability, so
the expectation is simply the sum of the model's token log-probabilities, computed here with plain
forward passes (no cache, no search). Checks: with 3^L beams the search is exhaustive and must
return the true top sequences, best first; with fewer beams its best is at least as good as greedy
decoding; returned beams are sorted best first; each image of a batch gets its own answers.
"""

from __future__ import annotations

import itertools

import pytest
import torch
from model_fixtures import tiny_generator

from srrg.model.network import ReportGenerator
from srrg.settings.model import InferConfig

torch.set_num_threads(1)
ALLOWED = "abc"
L = 3
SHARPEN = 40.0  # random init gives near-uniform logits; spread them so rankings are far from ties


def restricted_model(arch: str) -> tuple[ReportGenerator, list[int]]:
    # both archs: the tiny character vocabulary
    net = tiny_generator(arch, seed=3, char_tokenizer=True, max_target_tokens=16)
    ids = [net.tokenizer.convert_tokens_to_ids(c) for c in ALLOWED]
    lm = net.llm if net.llm is not None else net.decoder
    bias = torch.full((lm.config.vocab_size,), -1e9)
    bias[ids] = 0.0
    lm.get_output_embeddings().register_forward_hook(lambda _m, _i, out: out * SHARPEN + bias)
    # louder image tokens: a random decoder barely listens to them, and each image should matter
    net.projector.register_forward_hook(lambda _m, _i, out: out * 30.0)
    return net, ids


def sequence_logprobs(net: ReportGenerator, image: torch.Tensor, seqs: list[list[int]]) -> torch.Tensor:
    """Total log-probability of each full continuation, from one uncached forward pass."""
    ids = torch.tensor(seqs, dtype=torch.long)
    n = len(seqs)
    img = net.image_tokens(image.unsqueeze(0)).expand(n, -1, -1).contiguous()
    with torch.no_grad():
        if net.llm is not None:
            prompt = net._prompt_embeds(img)
            embeds = torch.cat([prompt, net.llm.get_input_embeddings()(ids)], dim=1)
            logits = net.llm(inputs_embeds=embeds).logits[:, prompt.shape[1] - 1 : -1]
        else:
            bos = torch.full((n, 1), net.decoder.config.bos_token_id, dtype=torch.long)
            logits = net.decoder(input_ids=torch.cat([bos, ids[:, :-1]], dim=1), encoder_hidden_states=img).logits
    logp = torch.log_softmax(logits.float(), dim=-1)
    return logp.gather(2, ids.unsqueeze(-1)).squeeze(-1).sum(dim=1)


def ranked(net: ReportGenerator, image: torch.Tensor, ids: list[int]) -> list[tuple[str, float]]:
    """Every continuation of length L as (text, log-probability), best first."""
    seqs = [list(s) for s in itertools.product(ids, repeat=L)]
    scores = sequence_logprobs(net, image, seqs)
    texts = ["".join(net.tokenizer.convert_ids_to_tokens(s)) for s in seqs]
    return sorted(zip(texts, scores.tolist()), key=lambda t: -t[1])


def score_of(table: list[tuple[str, float]], text: str) -> float:
    return dict(table)[text]


def first_difference(a: list[tuple[str, float]], b: list[tuple[str, float]]) -> int | None:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x[0] != y[0]), None)


@pytest.fixture(scope="module", params=["llm", "baseline"])
def model(request):
    """The model, two images whose rankings differ as early as possible, their full rankings, and
    how many top sequences it takes to tell the two images apart."""
    net, ids = restricted_model(request.param)
    torch.manual_seed(11)
    pool = torch.randn(16, 3, 32, 32)
    tables = [ranked(net, image, ids) for image in pool]
    found = [(k, j) for j in range(1, len(pool)) if (k := first_difference(tables[0], tables[j])) is not None]
    assert found, "the network ranks every image's continuations alike: does it see the image at all?"
    k, other = min(found)
    images, tables = pool[[0, other]], [tables[0], tables[other]]
    depth = max(5, k + 1)
    for table in tables:  # the rankings below are meaningful only without near-ties
        gaps = [a[1] - b[1] for a, b in zip(table[: depth + 1], table[1 : depth + 2])]
        assert min(gaps) > 1e-3, gaps
    return net, images, tables, depth


def test_exhaustive_beam_finds_the_true_top_sequences_best_first(model):
    net, images, tables, _ = model
    out = net.generate(
        images, InferConfig(num_beams=len(ALLOWED) ** L, num_return_sequences=5, max_new_tokens=L, constrained=False)
    )
    for cands, table in zip(out, tables):
        assert cands == [text for text, _ in table[:5]]


def test_beam_is_at_least_as_good_as_greedy_and_sorted(model):
    net, images, tables, _ = model
    greedy = net.generate(images, InferConfig(num_beams=1, num_return_sequences=1, max_new_tokens=L, constrained=False))
    beams = net.generate(images, InferConfig(num_beams=3, num_return_sequences=3, max_new_tokens=L, constrained=False))
    for g, cands, table in zip(greedy, beams, tables):
        scores = [score_of(table, t) for t in cands]
        assert len(set(cands)) == 3
        assert scores == sorted(scores, reverse=True)
        assert scores[0] >= score_of(table, g[0]) - 1e-4


def test_greedy_picks_the_most_likely_token_at_each_step(model):
    net, images, _, _ = model
    ids = [net.tokenizer.convert_tokens_to_ids(c) for c in ALLOWED]
    greedy = net.generate(images, InferConfig(num_beams=1, num_return_sequences=1, max_new_tokens=L, constrained=False))
    for i in range(len(images)):
        prefix: list[int] = []
        for _ in range(L):  # score the three one-token extensions of the prefix, keep the best
            scores = sequence_logprobs(net, images[i], [prefix + [t] for t in ids])
            prefix.append(ids[int(scores.argmax())])
        assert greedy[i] == ["".join(net.tokenizer.convert_ids_to_tokens(prefix))]


def test_each_image_gets_its_own_beams(model):
    net, images, tables, depth = model
    out = net.generate(
        images,
        InferConfig(num_beams=len(ALLOWED) ** L, num_return_sequences=depth, max_new_tokens=L, constrained=False),
    )
    assert out == [[t for t, _ in table[:depth]] for table in tables]
    assert out[0] != out[1]
