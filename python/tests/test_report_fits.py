"""A fitted number reaches the report only when the data carries it: a
parameter whose 1-sigma uncertainty exceeds its value (or is not finite)
reads 'not determined', never as a number (issue 28: a study on two cores
printed an eq. (14) crossover of 2.79e-21 +- 1e+02 planes)."""

from __future__ import annotations

import math

from hympi_lab import analysis, sections


def test_a_parameter_is_determined_only_when_its_sigma_is_below_its_size():
    assert analysis.determined({"value": 88.2, "sigma": 16.0})
    assert analysis.determined({"value": -3.0, "sigma": 1.0})
    assert not analysis.determined({"value": 2.79e-21, "sigma": 100.0})
    assert not analysis.determined({"value": 128.0, "sigma": 1.1e5})
    assert not analysis.determined({"value": 5.0, "sigma": math.inf})
    assert not analysis.determined({"value": math.nan, "sigma": 1.0})
    assert not analysis.determined({"value": 1.0})


def test_fitted_prints_the_number_or_says_not_determined():
    assert analysis.fitted({"value": 17.8, "sigma": 11.0}) == "17.8 +- 11"
    assert analysis.fitted({"value": 7.23e-7, "sigma": 9.1e-8}, 1e6, unit=" us") == "0.723 +- 0.091 us"
    text = analysis.fitted({"value": 2.79e-21, "sigma": 100.0})
    assert text.startswith("not determined") and "e-21" not in text


def eq14(crossing: dict) -> dict:
    return {"params": {"comm_ratio": {"value": 5.94, "sigma": 3.5},
                       "non_ratio": {"value": 11.9, "sigma": 6.4},
                       "nk_cross_m1": crossing},
            "rms_residual": 0.23}


def test_the_overlap_text_keeps_only_determined_crossovers():
    good = sections._overlap_text(eq14({"value": 17.8, "sigma": 11.0}), [1])
    assert "m = 1: crossover at nk_loc = 17.8 +- 11" in good
    bad = sections._overlap_text(eq14({"value": 2.79e-21, "sigma": 100.0}), [1])
    assert "e-21" not in bad and "no crossover determined" in bad


def test_an_undetermined_fit_is_one_sentence_without_numbers_of_it():
    fit = {"params": {"comm_ratio": {"value": 1e-3, "sigma": 40.0},
                      "non_ratio": {"value": 2.0, "sigma": 9.0},
                      "nk_cross_m1": {"value": 2.79e-21, "sigma": 100.0}},
           "rms_residual": 0.185}
    text = sections._overlap_text(fit, [1, 2])
    assert text.startswith("eq. (14) not determined")
    assert "+-" not in text and "e-21" not in text
