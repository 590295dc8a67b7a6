"""Every rating-set reader refuses duplicates, out-of-range values and malformed files with one line
naming the file and row (docs/metaeval.md, "Duplicates and out-of-range values"). Each fixture is a
copy of tests/fixtures/rating_layouts/ with one careless edit; before these checks each edit gave a
silently different number (a rater counted twice, an error row summed twice, a score of 99 used)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest
from metaeval_helpers import radpref_prepared
from paths import FIXTURES

from srrg.cli import main as srrg_main
from srrg.errors import UserError
from srrg.metaeval.radjudge import read_cases
from srrg.metaeval.readers.common import human_scores
from srrg.metaeval.readers.load import load_dataset

LAYOUTS = FIXTURES / "rating_layouts"
REXVAL_ERRORS = "6_valid_raters_per_rater_error_categories.csv"
REXVAL_REPORTS = "50_samples_gt_and_candidates.csv"


def _copy(tmp_path: Path, name: str) -> Path:
    return Path(shutil.copytree(LAYOUTS / name, tmp_path / name))


def _one_line_error(args: list[str], capsys) -> str:
    """The command's exit code is 2 and its error one line (no traceback)."""
    capsys.readouterr()
    assert srrg_main(args) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    return err


# RadPref: rater files and user ids


def test_radpref_rater_file_copied_beside_itself_is_refused_by_metaeval_prepare(tmp_path, capsys):
    """Bug: a copy of user_1.json (same user_id) was read too: user_1's rating of study_01:C1 was
    summed twice and the pair's human rating moved from 13/3 to 17/3; the copy must be refused."""
    root = _copy(tmp_path, "radpref")
    folder = root / "radiologist_annotations"
    shutil.copy(folder / "user_1.json", folder / "user_1 (copy).json")
    args = ["metaeval-prepare", "--adapter", "radpref", "--data", str(root), "--out-dir", str(tmp_path / "out")]
    err = _one_line_error(args, capsys)
    assert "user_1 (copy).json" in err and "user_id 'user_1'" in err and str(folder / "user_1.json") in err
    assert not (tmp_path / "out" / "ratings.parquet").exists()


def test_radpref_two_files_with_one_user_id_are_refused(tmp_path):
    """Bug: user_2.json re-labelled user_1 merged two radiologists into one rater (their counts
    summed per rater, so the pair's error total doubled)."""
    root = _copy(tmp_path, "radpref")
    path = root / "radiologist_annotations" / "user_2.json"
    doc = json.loads(path.read_text())
    path.write_text(json.dumps({**doc, "user_id": "user_1"}))
    with pytest.raises(UserError, match=r"user_2\.json: user_id 'user_1' .*repeats .*user_1\.json"):
        load_dataset("radpref", root)


def test_radpref_rater_named_twice_in_the_option_is_refused(tmp_path):
    """Bug: raters [user_1, user_1, user_2] read user_1's file twice."""
    with pytest.raises(UserError, match=r"radpref.options.raters must not repeat an item"):
        load_dataset("radpref", LAYOUTS / "radpref", raters=["user_1", "user_1", "user_2"])
    ds = load_dataset("radpref", LAYOUTS / "radpref", raters=["user_1", "user_2"])
    assert sorted(ds.ratings["rater"].unique()) == ["user_1", "user_2"]


def test_radpref_repeated_case_id_is_refused(tmp_path):
    """Bug: a case listed twice in preference_data.json made two pairs with one pair_id."""
    root = _copy(tmp_path, "radpref")
    path = root / "preference_data.json"
    cases = json.loads(path.read_text())
    path.write_text(json.dumps([*cases, {**cases[1], "C1_report": "other"}]))
    with pytest.raises(UserError, match=r"case 4 \(id 'study_02'\): case id 'study_02' repeats .*case 1"):
        load_dataset("radpref", root)


@pytest.mark.parametrize(
    ("file", "edit", "message"),
    [
        ("preference_data.json", lambda d: d[0].update(C1_report={"text": "x"}), "C1_report must be a text"),
        ("preference_data.json", lambda d: d[2].update(ground_truth_report=["x"]), "ground_truth_report must be"),
        (
            "radiologist_annotations/user_1.json",
            lambda d: d["annotations"]["study_01"]["C1"].update(rating=True),
            "rating must be a number 1-5, got True",
        ),
    ],
)
def test_radpref_malformed_nested_json_is_one_line(tmp_path, file, edit, message):
    """Bug: a report text that is an object reached the table constructor (a polars traceback);
    a JSON `true` rating was read as 1."""
    root = _copy(tmp_path, "radpref")
    doc = json.loads((root / file).read_text())
    edit(doc)
    (root / file).write_text(json.dumps(doc))
    with pytest.raises(UserError, match=message):
        load_dataset("radpref", root)


def test_radjudge_test_that_is_not_an_object_is_one_line(tmp_path):
    """Bug: a test entry written as a string raised AttributeError ('str' has no 'get')."""
    doc = json.loads((LAYOUTS / "radjudge" / "ranking_tests.json").read_text())
    doc[0]["tests"].append("C1 > C2")
    path = tmp_path / "ranking_tests.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(UserError, match=r"test \d+: expected an object, got 'C1 > C2'"):
        read_cases(path)


# ReXVal: error rows, raters, study ids, malformed CSV


def _rexval_with(tmp_path: Path, edit) -> Path:
    root = _copy(tmp_path, "rexval")
    lines = (root / REXVAL_ERRORS).read_text().splitlines()
    (root / REXVAL_ERRORS).write_text("\n".join(edit(lines)) + "\n")
    return root


def test_rexval_duplicated_error_row_is_refused_not_summed(tmp_path):
    """Bug: the same (study, candidate, category, rater, significance) row twice was summed, so a
    count of 2 became 4. The fixture's 0:bleu rater 0 category 1 significant row holds 2."""
    original = (LAYOUTS / "rexval" / REXVAL_ERRORS).read_text().splitlines()
    target = next(i for i, line in enumerate(original) if line == "0,bleu,1,0,True,2")
    root = _rexval_with(tmp_path, lambda lines: [*lines, lines[target]])
    with pytest.raises(UserError, match=rf"row {len(original) + 1}: study 0 bleu rater 0 category 1 significant "
                       rf"repeats .* row {target + 1}; each may appear once"):  # fmt: skip
        load_dataset("rexval", root)


@pytest.mark.parametrize(("cell", "shown"), [("", "None"), ("1.5", "1.5"), ("-1", "-1"), ("x", "'x'")])
def test_rexval_blank_or_broken_rater_index_is_refused(tmp_path, cell, shown):
    """Bug: a blank rater_index became a rater named 'None' with its own total."""

    def edit(lines):
        study, cand, cat, _, sig, n = lines[1].split(",")
        return [lines[0], ",".join([study, cand, cat, cell, sig, n]), *lines[2:]]

    with pytest.raises(UserError, match=rf"row 2: rater_index must be a whole number >= 0, got {shown}"):
        load_dataset("rexval", _rexval_with(tmp_path, edit))


def test_rexval_repeated_study_id_in_the_reports_is_refused(tmp_path):
    """Bug: a study listed twice in the reports file made two clusters of one study."""
    root = _copy(tmp_path, "rexval")
    lines = (root / REXVAL_REPORTS).read_text().splitlines()
    (root / REXVAL_REPORTS).write_text("\n".join([*lines, lines[1]]) + "\n")
    with pytest.raises(UserError, match=r"row 5: study_id 50000101 repeats .* row 2"):
        load_dataset("rexval", root)


@pytest.mark.parametrize(
    "text",
    [b"study_number,candidate_type\n0,bleu,1,2,3\n", b'study_number,candidate_type\n"0,bleu\n', b"a,b\n\xff\xfe,1\n"],
)
def test_malformed_rating_csv_is_one_line(tmp_path, text, capsys):
    """Bug: a ragged, badly quoted or non-UTF-8 CSV gave a polars traceback."""
    root = _copy(tmp_path, "rexval")
    (root / REXVAL_ERRORS).write_bytes(text)
    args = ["metaeval-prepare", "--adapter", "rexval", "--data", str(root), "--out-dir", str(tmp_path / "o")]
    assert REXVAL_ERRORS in _one_line_error(args, capsys)


# RaTE-Eval: the scale and the published file names


@pytest.mark.parametrize(("value", "shown"), [("99", "99.0"), ("-5", "-5.0"), ("4.75", "4.75"), ("NaN", "nan")])
def test_rate_eval_score_outside_the_scale_is_refused(tmp_path, value, shown):
    """Bug: scores 99 and -5 (outside the documented 0-4.5) were correlated as given."""
    root = _copy(tmp_path, "rate_eval") / "Task2_paragraph_rate"
    path = root / "rate_test.csv"
    lines = path.read_text().splitlines()
    lines[2] = lines[2].rsplit(",", 1)[0] + f",{value}"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(UserError, match=rf"rate_test\.csv row 3: Score must lie in 0-4\.5, got {shown}"):
        load_dataset("rate_eval", root)
    with pytest.raises(UserError, match=r"row 3: Score must lie in 0-4\.5"):
        load_dataset("rate_eval", path)
    path.write_text("\n".join(lines[:2] + [lines[2].rsplit(",", 1)[0] + ",4.5"] + lines[3:]) + "\n")
    assert load_dataset("rate_eval", root).ratings["value"].max() == 4.5  # the scale's end is inside


def test_rate_eval_folder_reads_only_the_published_file_names(tmp_path):
    """Bug: `rate_test (copy).csv` beside rate_test.csv matched rate_*.csv and was read too."""
    root = _copy(tmp_path, "rate_eval") / "Task2_paragraph_rate"
    shutil.copy(root / "rate_test.csv", root / "rate_test (copy).csv")
    shutil.copy(root / "rate_test.csv", root / "rate_validation.csv")
    ds = load_dataset("rate_eval", root)
    files = sorted({p.split(":")[0] for p in ds.pairs["pair_id"]})
    assert ds.pairs.height == 7 and files == ["rate_test", "rate_train"]
    (root / "rate_train.csv").unlink()
    (root / "rate_test.csv").unlink()
    with pytest.raises(UserError, match="neither rate_train.csv nor rate_test.csv"):
        load_dataset("rate_eval", root)


# RadEvalX: both rows of a report


def test_radevalx_report_with_one_of_its_two_rows_is_refused(tmp_path):
    """Bug: report 701 without its significant row got 0 significant errors (its one significant
    error lost)."""
    root = LAYOUTS / "radevalx"
    lines = (root / "radevalx_annotations.csv").read_text().splitlines()
    bad = tmp_path / "annotations.csv"
    bad.write_text("\n".join(line for line in lines if not line.startswith("701,significant")) + "\n")
    with pytest.raises(UserError, match=r"report\(s\) \['701'\] have one error_type row only"):
        load_dataset("radevalx", bad, reports=str(root / "radevalx_report.csv"))


# metaeval-correlate --scores


def test_correlate_refuses_repeated_study_ids_in_the_scores(tmp_path, capsys):
    """Bug: a pair scored twice (two rows of one study_id) weighed twice in every correlation."""
    prep = radpref_prepared(tmp_path)
    ids = pl.read_parquet(prep / "refs.parquet")["study_id"].to_list()
    scores = pl.DataFrame({"study_id": [*ids, ids[0]], "m": [float(i) for i in range(len(ids) + 1)]})
    scores.write_parquet(tmp_path / "s.parquet")
    args = ["metaeval-correlate", "--scores", str(tmp_path / "s.parquet"), "--ratings", str(prep / "ratings.parquet")]
    err = _one_line_error([*args, "--out", str(tmp_path / "o")], capsys)
    assert f"study_id ['{ids[0]}'] repeat (1 in all)" in err


def test_human_scores_with_distinct_raters_are_unchanged_by_the_checks():
    """The checks change no number of a clean file: RadPref study_01:C1 stays 13/3."""
    frame, _ = human_scores(load_dataset("radpref", LAYOUTS / "radpref").ratings, "rating")
    assert dict(zip(frame["pair_id"], frame["human"]))["study_01:C1"] == pytest.approx(13 / 3)


def test_correlate_refuses_a_ratings_or_pairs_table_with_repeated_rows(tmp_path, capsys):
    """Bug: ratings.parquet concatenated with itself doubled every rater's error totals (a summed
    judgement), and a pairs table listing a pair twice gave it the later row's cluster silently."""
    prep = radpref_prepared(tmp_path)
    ids = pl.read_parquet(prep / "refs.parquet")["study_id"].to_list()
    pl.DataFrame({"study_id": ids, "m": [float(i) for i in range(len(ids))]}).write_parquet(tmp_path / "s.parquet")
    ratings = pl.read_parquet(prep / "ratings.parquet")
    pl.concat([ratings, ratings.head(1)]).write_parquet(tmp_path / "r2.parquet")
    pairs = pl.read_parquet(prep / "pairs.parquet")
    pl.concat([pairs, pairs.tail(1)]).write_parquet(tmp_path / "p2.parquet")
    base = ["metaeval-correlate", "--scores", str(tmp_path / "s.parquet"), "--out", str(tmp_path / "o")]
    first = ratings.row(0)
    err = _one_line_error([*base, "--ratings", str(tmp_path / "r2.parquet")], capsys)
    assert f"r2.parquet: judgement (pair, rater, kind, category, level) [{first[:5]!r}] repeat (1 in all)" in err
    args = [*base, "--ratings", str(prep / "ratings.parquet"), "--pairs", str(tmp_path / "p2.parquet")]
    assert f"p2.parquet: pair_id ['{pairs['pair_id'][-1]}'] repeat (1 in all)" in _one_line_error(args, capsys)
