"""The image-to-report network: encoder -> projector -> frozen LLM (prompted) or baseline decoder.

Both architectures expose the same two operations, `loss` (teacher forcing, loss on target tokens
only) and `generate` (batched beam search), so training and inference do not care which one runs.
"""

from __future__ import annotations

import logging
from typing import Any

import torch
from torch import nn
from transformers import DynamicCache, LogitsProcessorList, PreTrainedModel, PreTrainedTokenizerBase

from srrg.model.baseline import build_baseline
from srrg.model.constrained import ReportConstraint, compile_report_grammar
from srrg.model.context import (
    ViewEmbedding,
    context_prompt,
    finding_line,
    place_views,
    prefix_ids,
    prefixed_inputs,
    prefixed_prompts,
    prompt_texts,
)
from srrg.model.encoder import ImageEncoder
from srrg.model.findings import FindingHead
from srrg.model.llm import load_llm, load_tokenizer, set_llm_mode, tune_llm
from srrg.model.projector import Projector
from srrg.model.prompt import build_prompt, target_token_ids
from srrg.model.words import word_tokenizer
from srrg.settings.model import InferConfig, ModelConfig

log = logging.getLogger(__name__)

IGNORE = -100  # label id that transformers' causal LM loss skips
LLM_PREFIX = "llm."
BACKBONE_PREFIX = "encoder.backbone."


def pad_batch(seqs: list[list[int]], pad_id: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded ids (B, T) and their 0/1 mask."""
    width = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), width), pad_id, dtype=torch.long, device=device)
    mask = torch.zeros((len(seqs), width), dtype=torch.long, device=device)
    for i, s in enumerate(seqs):
        ids[i, : len(s)] = torch.tensor(s, dtype=torch.long, device=device)
        mask[i, : len(s)] = 1
    return ids, mask


class ReportGenerator(nn.Module):
    def __init__(
        self,
        cfg: ModelConfig,
        tokenizer: PreTrainedTokenizerBase | None = None,
        llm: PreTrainedModel | None = None,
        vocab: list[str] | None = None,
        findings: list[str] | None = None,
    ) -> None:
        """tokenizer/llm: prebuilt ones (the throughput benchmark's random same-sized LLM); by
        default both are loaded from cfg.llm. vocab: the word vocabulary of a `words` baseline
        (built from the training targets, srrg.model.words). findings: the label set of the
        auxiliary finding head (srrg.model.findings), needed when cfg.finding_loss > 0."""
        super().__init__()
        self.cfg = cfg
        self.vocab = vocab
        self.tokenizer = tokenizer if tokenizer is not None else self._tokenizer(cfg, vocab)
        self.encoder = ImageEncoder(cfg.encoder)
        self.llm: PreTrainedModel | None = None
        self.decoder: PreTrainedModel | None = None
        if cfg.arch == "llm":
            self.llm = tune_llm(llm if llm is not None else load_llm(cfg.llm, self.tokenizer), cfg.llm)
            width = self.llm.get_input_embeddings().embedding_dim
            self.prompt = build_prompt(self.tokenizer, cfg.target)
        else:
            prefix = cfg.context.prefix_tokens if cfg.context.study_text else 0
            self.decoder = build_baseline(cfg.baseline, self.tokenizer, cfg.max_target_tokens, prefix)
            width = cfg.baseline.d_model
        self.projector = Projector(self.encoder.out_dim, cfg.projector_hidden or width, width)
        self.finding_head: FindingHead | None = None
        if cfg.finding_loss > 0:
            if not findings:
                raise ValueError("model.finding_loss > 0 needs the finding labels of the training reports")
            self.finding_head = FindingHead(self.encoder.out_dim, findings)
        # created last and only when on: a one-view model draws the same random numbers as before
        self.view_embedding = ViewEmbedding(cfg.context.views, width) if cfg.context.views > 1 else None

    @property
    def findings(self) -> list[str] | None:
        """The finding head's labels (saved with the model so that it can be rebuilt)."""
        return self.finding_head.labels if self.finding_head is not None else None

    @staticmethod
    def _tokenizer(cfg: ModelConfig, vocab: list[str] | None) -> PreTrainedTokenizerBase:
        if cfg.arch == "baseline" and cfg.baseline.vocab == "words":
            if vocab is None:
                raise ValueError("a baseline with a word vocabulary needs the vocabulary of its training targets")
            return word_tokenizer(vocab)
        return load_tokenizer(cfg.llm)

    @property
    def stores_llm(self) -> bool:
        """A random `tiny` LLM cannot be reloaded from anywhere, so its weights travel in checkpoints;
        real LLMs are reloaded from their source and kept out (checkpoints stay small)."""
        return self.llm is not None and self.cfg.llm.name == "tiny"

    def train(self, mode: bool = True) -> ReportGenerator:
        """The LLM's own layers stay in eval mode (no dropout) while the rest trains; LoRA adapters
        follow `mode`."""
        super().train(mode)
        if self.llm is not None:
            set_llm_mode(self.llm, mode)
        return self

    def export_state_dict(self) -> dict[str, torch.Tensor]:
        """Weights a checkpoint must carry (docs/model.md): every trained tensor, plus the frozen
        ones no source gives back (a random `tiny` LLM, a random frozen backbone). A reloadable
        frozen LLM or pretrained frozen backbone contributes only its trained adapters."""
        trained = {name for name, p in self.named_parameters() if p.requires_grad}
        reloaded = (LLM_PREFIX,) if self.llm is not None and not self.stores_llm else ()
        if self.encoder.reloadable:
            reloaded += (BACKBONE_PREFIX,)
        return {k: v for k, v in self.state_dict().items() if k in trained or not k.startswith(reloaded)}

    def load_exported(self, state: dict[str, Any]) -> None:
        """Inverse of export_state_dict; any missing trainable weight is an error."""
        expected = set(self.export_state_dict())
        missing = sorted(expected - set(state))
        unexpected = sorted(set(state) - set(self.state_dict()))
        if missing or unexpected:
            raise ValueError(f"checkpoint does not match the model: missing {missing[:5]}, unexpected {unexpected[:5]}")
        self.load_state_dict(state, strict=False)

    def image_tokens(self, images: torch.Tensor) -> torch.Tensor:
        return self.projector(self.encoder(images))

    def study_tokens(
        self, images: torch.Tensor, present: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Projected tokens and their mask (None: every token real). With `present` (B, N), images
        (B, N, C, H, W) are a study's views, each marked with its view embedding, empty slots
        masked (model.context.views, srrg.model.context.place_views)."""
        if present is None:
            return self.image_tokens(images), None
        return self._placed_views(self.encoder(images[present]), present)

    def _placed_views(self, tokens: torch.Tensor, present: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The encoder tokens (K, T, C) of the present views, projected and placed in their slots
        with their view embeddings (srrg.model.context.place_views)."""
        if self.view_embedding is None:
            raise ValueError("several views per study need model.context.views > 1")
        return place_views(self.projector(tokens), present, self.view_embedding)

    def finding_contexts(self, tokens: torch.Tensor) -> list[str] | None:
        """Each study's finding prompt (model.context.findings; None when off): the labels its
        finding head gives at least context.finding_threshold, in the head's order (most frequent
        first). The names are read off the image, never from the reference, in training and
        inference alike; no gradient flows through the choice of words (docs/model.md)."""
        if not self.cfg.context.findings:
            return None
        assert self.finding_head is not None
        with torch.no_grad():
            seen = torch.sigmoid(self.finding_head(tokens)) >= self.cfg.context.finding_threshold
        labels = self.finding_head.labels
        return [finding_line([labels[j] for j in row.nonzero().flatten().tolist()]) for row in seen]

    def _check_reads(self, contexts: list[str] | None) -> None:
        """Prompt text given to a baseline decoder built without a prefix would be read at
        positions it was never trained on (or past its last one), and a model trained with a text
        per study run without one would read a prompt it never saw (a caller that forgot the
        batch's contexts): both refused."""
        if contexts is not None and self.llm is None and not self.cfg.context.study_text:
            raise ValueError(
                "this baseline decoder reads no prompt text (it was built with model.context indication and "
                "prior_report off)"
            )
        reads = self.cfg.context.per_study_prompt if self.llm is not None else self.cfg.context.study_text
        if contexts is None and reads:
            raise ValueError(
                "a model with a finding prompt or study context (model.context findings, indication, prior_report) "
                "needs each study's prompt text"
            )

    def _prefixes(self, contexts: list[str] | None, n: int) -> list[list[int]]:
        """The baseline decoder's prefix tokens of each study: its context text cut to
        model.context.prefix_tokens (srrg.model.context.prefix_ids); none without contexts."""
        if contexts is None:
            return [[] for _ in range(n)]
        return prefix_ids(self.tokenizer, contexts, self.cfg.context.prefix_tokens)

    def _prompt_embeds(self, img: torch.Tensor) -> torch.Tensor:
        """prompt_inputs' embeddings of a model whose prompt is the same for every study."""
        return self.prompt_inputs(img, None)[0]

    def prompt_inputs(self, img: torch.Tensor, contexts: list[str] | None) -> tuple[torch.Tensor, torch.Tensor]:
        """[prefix | image tokens | suffix] embeddings and their 0/1 mask. Without contexts every
        study has the same prompt (no padding); with them each study's prompt carries its text
        (srrg.model.context.context_prompt) and the shorter ones are padded on the left, so that
        every prompt ends where the report begins."""
        assert self.llm is not None
        self._check_reads(contexts)
        embed = self.llm.get_input_embeddings()
        n, device = img.shape[0], img.device
        img = img.to(embed.weight.dtype)
        if contexts is None:
            prefix = torch.tensor(self.prompt.prefix_ids, dtype=torch.long, device=device).expand(n, -1)
            suffix = torch.tensor(self.prompt.suffix_ids, dtype=torch.long, device=device).expand(n, -1)
            embeds = torch.cat([embed(prefix), img, embed(suffix)], dim=1)
            return embeds, torch.ones(embeds.shape[:2], dtype=torch.long, device=device)
        rows = []
        for i, text in enumerate(contexts):
            prompt = context_prompt(self.tokenizer, self.cfg.target, text)
            before, after = (
                torch.tensor(p, dtype=torch.long, device=device) for p in (prompt.prefix_ids, prompt.suffix_ids)
            )
            rows.append(torch.cat([embed(before), img[i], embed(after)]))
        width = max(r.shape[0] for r in rows)
        embeds = img.new_zeros((n, width, img.shape[-1]))
        mask = torch.zeros((n, width), dtype=torch.long, device=device)
        for i, row in enumerate(rows):
            embeds[i, width - row.shape[0] :] = row
            mask[i, width - row.shape[0] :] = 1
        return embeds, mask

    def loss(
        self,
        images: torch.Tensor,
        targets: list[str],
        present: torch.Tensor | None = None,
        contexts: list[str] | None = None,
    ) -> torch.Tensor:
        """Mean cross-entropy over target tokens (EOS included); prompt and image positions ignored.
        contexts: each study's context text (model.context indication / prior_report; the batch's
        `contexts`), read before its finding line (srrg.model.context.prompt_texts)."""
        if present is None:
            return self._view_loss(self.encoder(images), targets, contexts)
        img, mask = self.study_tokens(images, present)
        return self.token_loss(img, targets, mask, contexts)

    def _view_loss(self, tokens: torch.Tensor, targets: list[str], contexts: list[str] | None) -> torch.Tensor:
        """The report loss of one view's encoder tokens, each study's prompt its context lines and
        finding line."""
        prompts = prompt_texts(contexts, self.finding_contexts(tokens))
        return self.token_loss(self.projector(tokens), targets, contexts=prompts)

    def losses(
        self,
        images: torch.Tensor,
        targets: list[str],
        positives: list[list[str]],
        present: torch.Tensor | None = None,
        contexts: list[str] | None = None,
    ) -> dict[str, torch.Tensor]:
        """`report` (= loss) and, with a finding head, `findings` (its BCE against each study's
        positive finding names) from one encoder pass; `total` is what training minimizes."""
        if present is None:
            tokens = self.encoder(images)
            out = {"report": self._view_loss(tokens, targets, contexts)}
        else:  # several views (model.context.views): one encoder pass over the present ones
            tokens = self.encoder(images[present])
            img, mask = self._placed_views(tokens, present)
            out = {"report": self.token_loss(img, targets, mask, contexts)}
        out["total"] = out["report"]
        if self.finding_head is not None:
            out["findings"] = self.finding_head.loss(tokens, positives, present)
            out["total"] = out["report"] + self.cfg.finding_loss * out["findings"]
        return out

    def token_loss(
        self,
        img: torch.Tensor,
        targets: list[str],
        mask_img: torch.Tensor | None = None,
        contexts: list[str] | None = None,
    ) -> torch.Tensor:
        """`loss` given the projected image tokens (B, N, width) instead of the images; mask_img:
        their 0/1 mask for the baseline's cross-attention (None: all real); contexts: each study's
        prompt text (the LLM's prompt, or the baseline decoder's prefix after BOS, right padded:
        [BOS | prefix | target]). Either way the loss is the mean over the batch's target tokens
        (a study weighs by its number of target tokens), prompt and padding ignored."""
        self._check_reads(contexts)
        seqs = target_token_ids(self.tokenizer, targets, self.cfg.max_target_tokens)
        if self.llm is not None:
            ids, mask = pad_batch(seqs, self.tokenizer.pad_token_id, img.device)
            return self._llm_loss(img, ids, mask, ids.masked_fill(mask == 0, IGNORE), contexts)
        assert self.decoder is not None
        bos, pad = self.decoder.config.bos_token_id, self.tokenizer.pad_token_id
        ids, mask, labels = prefixed_inputs(bos, pad, self._prefixes(contexts, len(seqs)), seqs)
        return self.decoder(
            input_ids=ids.to(img.device),
            attention_mask=mask.to(img.device),
            encoder_hidden_states=img,
            encoder_attention_mask=mask_img,
            labels=labels.to(img.device),
        ).loss

    def _prefix_cache(self, n: int, device: torch.device) -> DynamicCache:
        """Keys and values of the fixed prompt prefix, computed once per batch for one row and
        repeated over the batch. The prefix comes before every image token, so through a frozen
        LLM it carries no gradient and is the same for each study (docs/model.md, CPU step)."""
        assert self.llm is not None
        cache = DynamicCache()
        prefix = torch.tensor([self.prompt.prefix_ids], dtype=torch.long, device=device)
        with torch.no_grad():
            self.llm.base_model(input_ids=prefix, cache=cache, use_cache=True)
        cache.batch_repeat_interleave(n)
        return cache

    def _llm_loss(
        self,
        img: torch.Tensor,
        ids: torch.Tensor,
        mask: torch.Tensor,
        labels: torch.Tensor,
        contexts: list[str] | None = None,
    ) -> torch.Tensor:
        """Cross-entropy of the target tokens after [prefix | image | suffix], the same loss as
        the LLM's own over the whole sequence with the prompt positions ignored, computed with
        less work (docs/model.md, CPU step): the prefix from its cache (_prefix_cache; only for a
        frozen LLM without checkpointing and one prompt for all: adapters would make the prefix
        trainable), and the output layer only at the positions that predict a target token (the
        prompt's rows of the 49k-wide output were discarded). Left-padded per-study prompts
        (contexts) get positions that skip the padding, as in generation."""
        assert self.llm is not None
        embed = self.llm.get_input_embeddings()
        n = img.shape[0]
        # transformers drops caches under gradient checkpointing: the prefix then runs with the rest
        frozen = self.cfg.llm.tuning == "frozen" and not self.llm.is_activation_checkpointing
        cached = frozen and contexts is None and len(self.prompt.prefix_ids) > 0
        if cached:
            suffix = torch.tensor(self.prompt.suffix_ids, dtype=torch.long, device=img.device).expand(n, -1)
            head_embeds = torch.cat([img.to(embed.weight.dtype), embed(suffix)], dim=1)
            head_mask = torch.ones((n, len(self.prompt.prefix_ids) + head_embeds.shape[1]), dtype=torch.long)
        else:
            head_embeds, head_mask = self.prompt_inputs(img, contexts)
        attention = torch.cat([head_mask.to(img.device), mask], dim=1)
        positions = None if contexts is None else (attention.cumsum(dim=1) - 1).clamp(min=0)
        hidden = self.llm.base_model(
            inputs_embeds=torch.cat([head_embeds, embed(ids)], dim=1),
            attention_mask=attention,
            position_ids=positions,
            cache=self._prefix_cache(n, img.device) if cached else None,
            use_cache=cached,
        ).last_hidden_state
        # the position before each target token predicts it: the last prompt position and on
        start = head_embeds.shape[1] - 1
        logits = self.llm.get_output_embeddings()(hidden[:, start : start + ids.shape[1]])
        return nn.functional.cross_entropy(logits.float().flatten(0, 1), labels.flatten(), ignore_index=IGNORE)

    @property
    def constrainable(self) -> bool:
        """json targets over a tokenizer that spells any text (an LLM's): a word vocabulary of the
        training targets may have no pieces for the text that closes a report (docs/model.md)."""
        return self.cfg.target == "json" and (self.cfg.arch == "llm" or self.cfg.baseline.vocab == "llm")

    def report_grammar(self) -> Any:
        """The compiled report grammar over this model's tokenizer (srrg.model.constrained),
        compiled on first use and kept: the tokenizer and the logits width never change."""
        if getattr(self, "_report_grammar", None) is None:
            head = (self.llm if self.llm is not None else self.decoder).get_output_embeddings()
            self._report_grammar = compile_report_grammar(self.tokenizer, head.weight.shape[0])
        return self._report_grammar

    def generate(
        self,
        images: torch.Tensor,
        search: InferConfig,
        present: torch.Tensor | None = None,
        contexts: list[str] | None = None,
    ) -> list[list[str]]:
        """Beam search with the infer settings (InferConfig checks num_return_sequences <= num_beams);
        per image its `num_return_sequences` best texts, best first. A constrainable model decodes
        under the report grammar when search.constrained (docs/model.md, "Constrained generation").
        present: the views of each study (study_tokens); contexts: each study's context text (as in loss)."""
        return self.generate_with_prompts(images, search, present, contexts)[0]

    @torch.no_grad()
    def generate_with_prompts(
        self,
        images: torch.Tensor,
        search: InferConfig,
        present: torch.Tensor | None = None,
        contexts: list[str] | None = None,
    ) -> tuple[list[list[str]], list[str] | None]:
        """generate's texts and each study's prompt text as the model read it (the LLM: its context
        lines and finding line; the baseline decoder: its context lines as prefix tokens, whose
        beam search starts from [BOS | prefix], left padded; None when every study reads the fixed
        prompt), so that a prediction can be shown beside what it was made from."""
        if present is None:
            tokens = self.encoder(images)
            img, mask_img = self.projector(tokens), None
            contexts = prompt_texts(contexts, self.finding_contexts(tokens))
        else:
            img, mask_img = self.study_tokens(images, present)
        self._check_reads(contexts)
        tok = self.tokenizer
        max_new_tokens = search.max_new_tokens
        beams: dict[str, Any] = {
            "num_beams": search.num_beams,
            "num_return_sequences": search.num_return_sequences,
            "do_sample": False,
            "pad_token_id": tok.pad_token_id,
            "eos_token_id": tok.eos_token_id,
        }
        if self.llm is None:
            max_new_tokens = min(max_new_tokens, self.cfg.max_target_tokens)  # the decoder's positions
        if search.constrained and self.constrainable:
            grammar = self.report_grammar()
            constraint = ReportConstraint(grammar, tok, max_new_tokens, 2 * search.num_beams)
            beams["logits_processor"] = LogitsProcessorList([constraint])
        if self.llm is not None:
            embeds, attention = self.prompt_inputs(img, contexts)
            out = self.llm.generate(
                inputs_embeds=embeds, attention_mask=attention, max_new_tokens=max_new_tokens, **beams
            )
        else:
            assert self.decoder is not None
            bos, pad = self.decoder.config.bos_token_id, tok.pad_token_id
            ids, attention = prefixed_prompts(bos, pad, self._prefixes(contexts, img.shape[0]))
            out = self.decoder.generate(
                input_ids=ids.to(img.device),
                attention_mask=attention.to(img.device),
                encoder_hidden_states=img,
                **({} if mask_img is None else {"encoder_attention_mask": mask_img}),
                max_new_tokens=max_new_tokens,
                **beams,
            )[:, ids.shape[1] :]  # the prompt is not part of the report
        texts = [t.strip() for t in tok.batch_decode(out, skip_special_tokens=True)]
        k = search.num_return_sequences
        return [texts[i * k : (i + 1) * k] for i in range(img.shape[0])], contexts
