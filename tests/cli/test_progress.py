"""Progress lines without a terminal: one plain line per tenth of the work, no carriage return."""

from __future__ import annotations

import logging

from srrg.progress import Progress, tracked


def test_plain_lines_at_each_tenth_and_no_carriage_return(caplog):
    with caplog.at_level(logging.INFO, logger="srrg.progress"):
        assert list(tracked(range(20), "extract", "report")) == list(range(20))
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 10  # at 2, 4, ..., 20 of 20
    assert lines[0].startswith("extract: 2/20 report (10%) ") and lines[-1].startswith("extract: 20/20 report (100%) ")
    assert not any("\r" in line for line in lines)


def test_fewer_items_than_steps_give_one_line_each(caplog):
    with caplog.at_level(logging.INFO, logger="srrg.progress"):
        list(tracked(["a", "b", "c"], "shards", "shard"))
    assert [r.getMessage().split(" ", 2)[:2] for r in caplog.records] == [
        ["shards:", "1/3"],
        ["shards:", "2/3"],
        ["shards:", "3/3"],
    ]


def test_unknown_length_says_once_how_far_it_got_and_disable_is_silent(caplog):
    with caplog.at_level(logging.INFO, logger="srrg.progress"):
        list(tracked(iter(range(5)), "reports", "report"))
        list(tracked(range(5), "quiet", disable=True))
        bar = Progress(4, "llm openai", "req", disable=True)
        bar.update(4)
        bar.close()
    assert [r.getMessage().split(" s")[0].rsplit(" ", 1)[0] for r in caplog.records] == ["reports: 5 report"]
