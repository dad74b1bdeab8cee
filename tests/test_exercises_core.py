"""``call``: how a checker runs the student's code and turns its errors into hints."""
import pytest
from conftest import stub

from nn_from_scratch.exercises._core import Mistake, call

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
