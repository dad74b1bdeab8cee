"""How a checker turns the student's errors (``call``) and typical wrong answers
(``reject_known_wrong``) into hints."""
import numpy as np
import pytest
from conftest import stub

from nn_from_scratch.exercises._core import Mistake, call, reject_known_wrong

HINTS = {("inconsistent sizes", "vmap"): "give the shared params in_axes None",
         "rank": "the scale is shared: in_axes None"}


def fails_with(message):
    def student(*args):
        raise ValueError(message)
    return student


def test_call_returns_the_answer_and_passes_the_stub_through():
    assert call(lambda a, b: a + b, 2, 3, what="add(2, 3)", hints=HINTS) == 5
    with pytest.raises(NotImplementedError):  # the decorator makes this "not done"
        call(stub, 1, what="f(1)", hints={"NotImplementedError": "a hint must not hide a stub"})


def test_call_quotes_an_error_that_no_hint_explains():
    with pytest.raises(Mistake, match=r"^f\(x\) raised ValueError: bad thing$"):
        call(fails_with("bad thing"), what="f(x)", hints=HINTS)


@pytest.mark.parametrize("error, hint", [
    ("vmap got inconsistent sizes for array axes", "give the shared params in_axes None"),
    ("vmap in_axes must be ...", "give the shared params in_axes None"),
    ("rank of the input is 0", "the scale is shared: in_axes None")])
def test_call_replaces_an_error_with_the_hint_for_its_sign(error, hint):
    with pytest.raises(Mistake) as caught:
        call(fails_with(error), what="f(x)", hints=HINTS)
    assert str(caught.value) == hint
    assert caught.value.__cause__ is None  # the hint stands alone: no traceback to wade through


def test_call_tries_the_hints_in_order():
    with pytest.raises(Mistake, match="^give the shared"):  # both signs are in the message
        call(fails_with("vmap: rank mismatch"), what="f(x)", hints=HINTS)


def test_call_catches_a_missing_return_and_a_non_function():
    with pytest.raises(Mistake, match="forget `return`"):
        call(lambda: None, what="f()", hints=HINTS)
    with pytest.raises(Mistake, match="expected a function for f; got int 3"):
        call(3, what="f")


WRONG = {"the other way up": 0.5, "the sum, not the mean": 6.0}


def test_reject_known_wrong_names_the_mistake_that_the_answer_equals():
    with pytest.raises(Mistake, match="^the sum, not the mean$"):
        reject_known_wrong(6.0 + 1e-9, WRONG)
    with pytest.raises(Mistake, match="^the other way up$"):
        reject_known_wrong(np.array([0.5, 0.5]), {"the other way up": np.array([0.5, 0.5])})


def test_reject_known_wrong_lets_other_answers_through_for_the_checker_to_judge():
    reject_known_wrong(2.0, WRONG)  # the right answer, or a mistake nobody foresaw: no hint
    reject_known_wrong(0.51, WRONG, rtol=1e-3)  # outside the tolerance


def test_reject_known_wrong_skips_a_mistake_that_gives_the_right_answer_here():
    # on these inputs "the other way up" happens to be right: never blame a right answer
    reject_known_wrong(0.5, WRONG, want=0.5)
    with pytest.raises(Mistake, match="^the sum"):
        reject_known_wrong(6.0, WRONG, want=0.5)
