"""spaCy, imported without torch.

spaCy's array library thinc imports torch when it is installed (for its PyTorch wrappers): about
1.4 s of import time and ~470 MiB per process, in every extraction process and every worker.
srrg's pipelines (a blank or a configured tokenizer/sentence model plus rule components) never run
a torch layer, so when torch is not loaded yet it is hidden while spaCy is imported: thinc then
records that it has no torch, and torch stays importable for whatever else the process does.
"""

from __future__ import annotations

import sys

if "spacy" not in sys.modules and "torch" not in sys.modules:
    sys.modules["torch"] = None  # type: ignore[assignment]  # `import torch` raises ImportError
    try:
        import spacy
    finally:
        del sys.modules["torch"]
else:
    import spacy

__all__ = ["spacy"]
