"""`srrg cases` (docs/cases.md): the alignment of reference and predicted findings against
hand-computed cases and against S-Score's own numbers, the page's data built from run files in the
workflow's layout, and the self-contained page."""

from __future__ import annotations

import base64
import io
import json
import random
import re
import sqlite3
from contextlib import closing

import polars as pl
import pytest
from cases_fixtures import REFERENCES, cases_command, write_fixture
from PIL import Image

from srrg.cases.align import ATTRIBUTE, FALSE, MATCHED, MISSED, NEGATIVE, POSITIVE, align
from srrg.cases.build import RunTables, case_list, comparison
from srrg.cases.page import embedded_json, render_page
from srrg.cli import main
from srrg.metrics.sscore import location_bleu, score_pair
from srrg.report import Finding, StructuredReport


def rep(positive=(), negative=()) -> StructuredReport:
    return StructuredReport(tuple(positive), tuple(negative))


def marks(rows):
    return [(r.name, r.polarity, r.mark) for r in rows]


# --- alignment, hand-computed ----------------------------------------------------------------


def test_identical_reports_are_all_matched():
    report = rep([Finding("pleural effusion", 3, "small", "left"), Finding("edema", 2)], ["pneumothorax"])
    rows = align(report, report)
    assert marks(rows) == [
        ("pleural effusion", POSITIVE, MATCHED),
        ("edema", POSITIVE, MATCHED),
        ("pneumothorax", NEGATIVE, MATCHED),
    ]
    assert rows[0].scores == (1.0, 1.0, 1.0) and rows[2].scores is None


def test_each_attribute_that_differs_marks_the_finding_and_carries_s_scores_part():
    ref = rep([Finding("a", 3), Finding("b", 3, "mild"), Finding("c", 3, None, "left lower lobe")])
    hyp = rep([Finding("a", 2), Finding("b", 3, "severe"), Finding("c", 3, None, "left upper lobe")])
    rows = align(ref, hyp)
    assert [r.mark for r in rows] == [ATTRIBUTE] * 3
    assert rows[0].scores == (0.75, 1.0, 1.0)  # 1 - ((2 - 3) / 2)^2
    assert rows[1].scores == (1.0, 0.0, 1.0)
    assert rows[2].scores == (1.0, 1.0, location_bleu("left lower lobe", "left upper lobe"))
    assert 0 < rows[2].scores[2] < 1
    assert rows[0].ref == Finding("a", 3) and rows[0].hyp == Finding("a", 2)


def test_missing_probability_on_both_sides_differs_as_s_score_counts_it():
    """S-Score gives a missing probability 0 even when both sides miss it (docs/metrics.md)."""
    rows = align(rep([Finding("a", None)]), rep([Finding("a", None)]))
    assert rows[0].mark == ATTRIBUTE and rows[0].scores == (0.0, 1.0, 1.0)


def test_missed_and_false_in_reference_order_then_prediction_only():
    ref = rep([Finding("b"), Finding("a")], ["x", "y"])
    hyp = rep([Finding("c"), Finding("a")], ["z", "y"])
    assert marks(align(ref, hyp)) == [
        ("b", POSITIVE, MISSED),
        ("a", POSITIVE, MATCHED),
        ("c", POSITIVE, FALSE),
        ("x", NEGATIVE, MISSED),
        ("y", NEGATIVE, MATCHED),
        ("z", NEGATIVE, FALSE),
    ]


def test_a_name_positive_on_one_side_and_negative_on_the_other_counts_in_each_set():
    rows = align(rep([Finding("edema")]), rep([], ["edema"]))
    assert marks(rows) == [("edema", POSITIVE, MISSED), ("edema", NEGATIVE, FALSE)]
    assert rows[0].ref == Finding("edema") and rows[0].hyp is None


def test_empty_reports_align_to_nothing():
    assert align(rep(), rep()) == []


def _random_report(rng: random.Random) -> StructuredReport:
    names = ["a", "b", "c", "d", "e"]
    pos = [
        Finding(
            n,
            rng.choice([1, 2, 3, None]),
            rng.choice([None, "mild", "large"]),
            rng.choice([None, "left", "left lower lobe", "right base"]),
        )
        for n in rng.sample(names, rng.randint(0, 3))
    ]
    neg = rng.sample([n for n in names if n not in {f.name for f in pos}], rng.randint(0, 2))
    return rep(pos, neg)


def test_marks_reproduce_s_scores_p_and_d_on_random_pairs():
    """P_pos, P_neg from the marks' counts and D from the attribute parts equal score_pair's values."""
    rng = random.Random(7)

    def f1(rows, polarity):
        kinds = [r.mark for r in rows if r.polarity == polarity]
        both = sum(k in (MATCHED, ATTRIBUTE) for k in kinds)
        n_ref, n_hyp = both + kinds.count(MISSED), both + kinds.count(FALSE)
        return 1.0 if n_ref + n_hyp == 0 else 2 * both / (n_ref + n_hyp)

    for _ in range(300):
        ref, hyp = _random_report(rng), _random_report(rng)
        rows, expected = align(ref, hyp), score_pair(ref, hyp)
        assert f1(rows, POSITIVE) == pytest.approx(expected["p_pos"])
        assert f1(rows, NEGATIVE) == pytest.approx(expected["p_neg"])
        union = [r for r in rows if r.polarity == POSITIVE]
        d = sum(sum(r.scores) / 3 for r in union if r.scores) / len(union) if union else 1.0
        assert d == pytest.approx(expected["d_score"])
        assert all((r.mark == MATCHED) == (r.scores == (1.0, 1.0, 1.0)) for r in union if r.scores)


# --- the page's data ------------------------------------------------------------------------


@pytest.fixture()
def files(tmp_path):
    return write_fixture(tmp_path)


def test_case_list_has_one_case_per_scored_study_and_counts_the_rest(files):
    data = case_list(
        RunTables("base", files["predictions"], files["scores"]), files["dataset"], "test", judge=files["judge"]
    )
    assert [s["id"] for s in data["studies"]] == ["s1", "s2", "s3", "s4", "s5"]
    assert data["unscored"] == {"view_filtered": 1}
    assert data["structured"] and data["target"] == "json" and data["images"] == "phantom"
    assert (
        data["scores"][:3] == ["s_score", "p_score", "d_score"]
        and "rouge_l" in data["scores"]
        and "green" in data["scores"]
    )
    # s_score_hyp_status repeats parse_status here (the workflow scores the raw output): shown once
    assert data["statuses"] == ["parse_status", "rouge_l_status", "green_status"]
    assert data["explanations"] == ["green_explanation"]
    by_id = {s["id"]: s for s in data["studies"]}
    s2 = by_id["s2"]
    # [name, positive?, mark (0 matched, 1 attribute, 2 missed, 3 false), ref attrs, hyp attrs, attribute parts]
    assert s2["f"] == [
        ["pleural effusion", 1, 1, [3, None, "right"], [2, None, "right"], [0.75, 1.0, 1.0]],
        ["cardiomegaly", 1, 2, [3, "mild", None], None, None],
        ["pneumothorax", 0, 3, None, None, None],
    ]
    scores = pl.read_parquet(files["scores"]).filter(pl.col("study_id") == "s2").row(0, named=True)
    assert s2["sc"][data["scores"].index("s_score")] == pytest.approx(scores["s_score"], abs=1e-4)
    assert s2["st"] == ["valid", "ok", "truncated"]
    assert s2["ex"] == ["Cardiomegaly <b>omitted</b>; effusion less certain."]
    assert "ex" not in by_id["s3"]  # not judged
    assert by_id["s3"]["st"][0] == "unparseable" and "raw" not in by_id["s3"]
    assert by_id["s3"]["hyp"] == "the lungs are clear {"  # nothing parsed: the raw output is shown, once
    assert "raw" not in by_id["s1"]  # valid JSON: its rendering and the table show all of it
    assert by_id["s5"]["st"][0] == "repaired" and by_id["s5"]["raw"].endswith(",}")  # what was written, too
    assert by_id["s4"]["sc"][data["scores"].index("s_prob")] is None  # NaN (nothing matched) -> null


def test_phantom_thumbnails_are_small_jpeg_pictures(files):
    data = case_list(
        RunTables("base", files["predictions"], files["scores"]), files["dataset"], "test", thumbnail_size=48
    )
    uri = data["studies"][0]["img"]
    assert uri.startswith("data:image/jpeg;base64,")
    with Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1]))) as img:
        assert img.size == (48, 48)
    assert len(uri) < 2000


def test_a_sentence_direct_run_lists_the_reference_findings_as_not_compared(tmp_path):
    from cases_fixtures import write_dataset, write_run

    dataset = write_dataset(tmp_path)
    hyps = {"s1": "there is small pleural effusion left.", "s2": "no evidence of edema.", "s3": "normal."}
    preds, scores = write_run(tmp_path, "sent", hyps, metrics=("rouge_l",), target="sentences")
    data = case_list(RunTables("sent", preds, scores), dataset, "test")
    assert not data["structured"] and data["target"] == "sentences" and data["scores"] == ["rouge_l"]
    assert data["unscored"] == {"view_filtered": 3}
    s1 = data["studies"][0]
    assert s1["ref"] == "there is small pleural effusion left. no evidence of pneumothorax."
    assert s1["hyp"] == "there is small pleural effusion left."
    # from the dataset's structured reference; -1 = not compared (no structured prediction)
    assert s1["f"] == [
        ["pleural effusion", 1, -1, [3, "small", "left"], None, None],
        ["pneumothorax", 0, -1, None, None, None],
    ]
    assert s1["st"] == [None, "ok"]


def test_comparison_is_keyed_by_study(files):
    other = comparison(RunTables("other", files["other_predictions"], files["other_scores"]))
    assert set(other["studies"]) == {"s1", "s2", "s3", "s4", "s5"}
    assert other["studies"]["s2"]["sc"][other["scores"].index("s_score")] == 1.0
    assert other["studies"]["s1"]["hyp"] == "no evidence of pneumothorax."


def test_page_is_self_contained_and_its_data_cannot_close_the_script(files):
    data = case_list(
        RunTables("base", files["predictions"], files["scores"]), files["dataset"], "test", judge=files["judge"]
    )
    data["compare"] = []
    page = render_page(data, "Cases <of> base")
    assert "<title>Cases &lt;of&gt; base</title>" in page
    assert "<b>omitted</b>" not in page and "\\u003cb>omitted\\u003c/b>" in page
    assert "default-src 'none'" in page  # the browser refuses every request the page could make
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", page)
    blob = page.split('<script type="application/json" id="cases-data">', 1)[1].split("</script>", 1)[0]
    assert json.loads(blob)["studies"][1]["ex"] == ["Cardiomegaly <b>omitted</b>; effusion less certain."]
    assert embedded_json({"a": "</script>"}) == '{"a":"\\u003c/script>"}'


def test_cli_writes_the_page(files, tmp_path, capsys):
    out = tmp_path / "out" / "cases.html"
    rc = main(cases_command(files, out))
    assert rc == 0
    assert "srrg cases: 5 studies of base (phantom images, 1 comparison runs)" in capsys.readouterr().out
    assert '"run":"other"' in out.read_text()


def _cli(files, tmp_path, **override):
    args = {
        "--predictions": files["predictions"],
        "--scores": files["scores"],
        "--dataset": files["dataset"],
        "--out": tmp_path / "c.html",
        **override,
    }
    argv = ["cases"]
    for k, v in args.items():
        argv += [k, str(v)]
    return main(argv)


def test_scores_of_studies_the_predictions_lack_are_an_error(files, tmp_path, capsys):
    extra = pl.read_parquet(files["scores"]).with_columns(pl.lit("zz").alias("study_id")).head(1)
    path = tmp_path / "bad.parquet"
    pl.concat([pl.read_parquet(files["scores"]), extra]).write_parquet(path)
    assert _cli(files, tmp_path, **{"--scores": path}) == 2
    assert "1 scored studies are not in --predictions" in capsys.readouterr().err


def test_wrong_split_missing_file_and_foreign_judge_are_one_line_errors(files, tmp_path, capsys):
    assert _cli(files, tmp_path, **{"--split": "validate"}) == 2
    assert "no Parquet shards in" in capsys.readouterr().err
    assert _cli(files, tmp_path, **{"--scores": tmp_path / "nope.parquet"}) == 2
    assert "no such file" in capsys.readouterr().err
    judge = tmp_path / "judge.parquet"
    pl.DataFrame({"study_id": ["s6"], "reference": ["x"], "hypothesis": ["y"], "green": [1.0]}).write_parquet(judge)
    assert _cli(files, tmp_path, **{"--judge": judge}) == 2
    assert "--judge" in capsys.readouterr().err and not (tmp_path / "c.html").exists()


def test_fixture_references_are_the_dataset_reports(files):
    """The page's reference findings come from what was scored, which is the dataset's report."""
    data = case_list(RunTables("base", files["predictions"], files["scores"]), files["dataset"], "test")
    s5 = next(s for s in data["studies"] if s["id"] == "s5")
    assert [r[0] for r in s5["f"]] == [f["name"] for f in json.loads(REFERENCES["s5"])["positive"]]


def test_thumbnail_cache_draws_each_picture_once(tmp_path, monkeypatch):
    from srrg.cases import thumbs

    report = rep([Finding("pleural effusion", 3, "large", "left")])
    first = thumbs.thumbnails("phantom", ["a", "b"], [report, rep()], [None, None], 32, cache_dir=tmp_path)
    with closing(sqlite3.connect(tmp_path / thumbs.CACHE_FILE)) as conn:
        assert conn.execute("SELECT COUNT(*) FROM thumbnails").fetchone() == (2,)

    def no_drawing(job):
        raise AssertionError(f"drew {job[1]} again")

    monkeypatch.setattr(thumbs, "_one", no_drawing)
    assert thumbs.thumbnails("phantom", ["a", "b"], [report, rep()], [None, None], 32, cache_dir=tmp_path) == first
    with pytest.raises(AssertionError, match="drew a again"):  # another report is another picture
        thumbs.thumbnails("phantom", ["a"], [rep([Finding("edema")])], [None], 32, cache_dir=tmp_path)
    with pytest.raises(AssertionError, match="drew b again"):  # so is another size
        thumbs.thumbnails("phantom", ["b"], [rep()], [None], 48, cache_dir=tmp_path)


def test_the_prompt_context_a_prediction_was_read_with_is_on_its_card(files, tmp_path):
    """srrg infer records each prediction's prompt text (finding line, indication, prior report):
    the case shows it. Fails if a study got another study's context, a null context were shown as
    text, or predictions written before the column existed stopped the page."""
    preds = pl.read_parquet(files["predictions"])
    with_ctx = tmp_path / "with_context.parquet"
    lines = {"s2": "Findings seen in the image: pleural effusion"}
    preds.with_columns(context=pl.col("study_id").replace_strict(lines, default=None)).write_parquet(with_ctx)
    data = case_list(RunTables("base", with_ctx, files["scores"]), files["dataset"], "test")
    by_id = {s["id"]: s for s in data["studies"]}
    assert by_id["s2"]["ctx"] == lines["s2"]
    assert all("ctx" not in s for i, s in by_id.items() if i != "s2")
    old = case_list(RunTables("base", files["predictions"], files["scores"]), files["dataset"], "test")
    assert all("ctx" not in s for s in old["studies"])
