"""The link from each study to its patient's previous study (docs/workflow.md, "Study context").

A model that is shown the prior report can say "unchanged"; one that is not cannot know. The link
is made by study date and time within a patient and within a split: the split is by patient, so
the split condition never removes a link, and it guarantees that a test study never reads a train
study's report even should a split file disagree with itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from srrg.sources.common import OK, natural_key

FIRST, NO_DATE = "first", "no_date"


def link_priors(rows: Iterable[dict[str, Any]]) -> None:
    """Set `prior_study_id` and `prior_status` of every row: the latest study of the same subject
    and split dated strictly before it (`ok`); `first` when there is none; `no_date` when the study
    has no date (such a study is neither linked nor a prior). Studies of the same date and time
    are not linked to each other: which came first is unknown."""
    groups: dict[tuple[str, str], list[tuple[datetime, dict[str, Any]]]] = {}
    for row in rows:
        row["prior_study_id"] = None
        moment = row.get("study_datetime")
        if moment is None:
            row["prior_status"] = NO_DATE
            continue
        groups.setdefault((row["subject_id"], row["split"]), []).append((moment, row))
    for studies in groups.values():
        studies.sort(key=lambda pair: (pair[0], natural_key(pair[1]["study_id"])))
        earlier: dict[str, Any] | None = None  # the latest study strictly before the current moment
        for k, (moment, row) in enumerate(studies):
            if k and studies[k - 1][0] < moment:
                earlier = studies[k - 1][1]
            row["prior_study_id"] = earlier["study_id"] if earlier else None
            row["prior_status"] = OK if earlier else FIRST
