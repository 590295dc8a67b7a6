"""Location normalization (docs/workflow.md): raw anatomical phrases -> standardized clinician-friendly phrases.

Two normalizers share one stage. The rules normalizer (rules.py, its words in locations.yaml read by
vocabulary.py) is deterministic and the offline default: it reads laterality, lobes, zones and
structures from the raw phrase and renders one canonical phrase ("lung right lower" -> "in the lower
zone of the right lung"). The LLM path (llm.py, prompt.txt) sends each unique phrase once through
srrg.llm (only the phrase, never report text), validates the answer and falls back to the rules
phrase when the answer is not a short anatomical phrase with the same laterality. table.py is the
stage's table step (the command is srrg.stages.normalize); its settings are srrg.settings.normalize.
"""

from srrg.normalize.llm import PROMPT, PhraseResult, clean_answer, normalize_phrases, validate_answer
from srrg.normalize.rules import rules_normalize
from srrg.normalize.table import StageSummary, apply_mapping, collect_phrases, run, run_normalize

__all__ = [
    "PROMPT",
    "PhraseResult",
    "StageSummary",
    "apply_mapping",
    "clean_answer",
    "collect_phrases",
    "normalize_phrases",
    "rules_normalize",
    "run",
    "run_normalize",
    "validate_answer",
]
