"""The S-RRG prompt: the LLM's chat template, image embeddings between `<Img>` and `</Img>`.

The prompt is the same for every study, so it is tokenized once into the ids before and after the
image slot; the image embeddings are spliced in between at embedding level.
"""

from __future__ import annotations

from dataclasses import dataclass

from transformers import PreTrainedTokenizerBase

INSTRUCTIONS = {
    "json": "Generate a structure report for this chest x-ray image in JSON format. "
    "Make sure the output is valid JSON format.",
    "sentences": "Generate a report for this chest x-ray image. Write one short sentence per finding.",
    "srrg": "Generate the structured findings of this chest x-ray image: organ-system headers, "
    "each followed by one bullet per finding.",
}
IMAGE_SLOT = "<ImageHere>"


@dataclass(frozen=True)
class Prompt:
    prefix_ids: tuple[int, ...]
    suffix_ids: tuple[int, ...]


def prompt_text(tok: PreTrainedTokenizerBase, target: str) -> str:
    """The full prompt with IMAGE_SLOT where the image goes; plain text when there is no template."""
    content = f"<Img>{IMAGE_SLOT}</Img> {INSTRUCTIONS[target]}"
    if getattr(tok, "chat_template", None):
        return tok.apply_chat_template(
            [{"role": "user", "content": content}], tokenize=False, add_generation_prompt=True
        )
    return f"{content}\n"


def build_prompt(tok: PreTrainedTokenizerBase, target: str) -> Prompt:
    """Token ids around the image slot (special tokens come from the template, never added twice)."""
    before, after = prompt_text(tok, target).split(IMAGE_SLOT)
    enc = tok([before, after], add_special_tokens=False)["input_ids"]
    return Prompt(tuple(enc[0]), tuple(enc[1]))


def target_token_ids(tok: PreTrainedTokenizerBase, texts: list[str], max_tokens: int) -> list[list[int]]:
    """Target ids ending in EOS (so the model learns to stop), truncated to max_tokens."""
    enc = tok(texts, add_special_tokens=False)["input_ids"]
    return [(ids + [tok.eos_token_id])[:max_tokens] for ids in enc]
