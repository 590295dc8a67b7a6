"""A judge answer nested past Python's recursion limit is an unparseable answer, never a
RecursionError (issue 46: N1)."""

from __future__ import annotations

import pytest

from srrg.metrics.base import get_metric
from srrg.metrics.judges.common import UNPARSEABLE, Reply, strict_object
from srrg.settings.judge import LLM_JUDGES

DEEP = '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"


def test_n1_the_shared_structured_parser_reads_a_deep_answer_as_unparseable():
    """N1: the shared structured-answer parser (strict_object) raised RecursionError on a deeply
    nested answer, through every judge."""
    assert strict_object(Reply(DEEP), {"type": "object"}) == (None, UNPARSEABLE)


@pytest.mark.parametrize("judge", LLM_JUDGES)
@pytest.mark.parametrize("structured", [True, False])
def test_n1_every_judge_scores_a_deep_answer_as_a_failure(judge: str, structured: bool):
    """N1: each judge (structured answers and text answers) records the deep answer as a failed
    answer with a status, and scoring goes on."""
    if judge == "gema":  # agents: each answer is parsed on its own (the entity agent's first)
        from srrg.metrics.judges.gema import parse_entities

        statuses = [parse_entities(DEEP, structured)[1]]
    else:
        result = get_metric(judge).score([DEEP], structured=structured)
        statuses = [v for k, col in result.per_report.items() if k.endswith("status") for v in col]
    assert statuses and all(s != "ok" for s in statuses), statuses
