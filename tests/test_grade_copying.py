"""Copying the library's answer is found in the submitted source (grade/copying.py): imports,
aliases and wrappers of the exercise's own function in the library, or anything of the checkers'
package, are the library's own; the library used as the lessons use it is the student's work."""
import pytest
from grading_fixtures import notebook, small_release

from nn_from_scratch.grade.copying import library_copies, twins
from nn_from_scratch.grade.rebuild import rebuild
from nn_from_scratch.grade.release import load_release
from nn_from_scratch.model import relu


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    return load_release("07_mlp_from_scratch", small_release(tmp_path_factory.mktemp("rel")))


def copies(release, exercise_source, *before):
    """What library_copies says of a submission whose first exercise (07.1 relu) is
    ``exercise_source``, after added cells ``before``."""
    cells = [("", source) for source in before] + [("exercise", exercise_source),
                                                    ("check", "check.relu(relu)")]
    return library_copies(rebuild(notebook(*cells), release), release)


@pytest.mark.parametrize("source", [
    "from nn_from_scratch.model import relu",
    "from nn_from_scratch import model\nrelu = model.relu",
    "import nn_from_scratch.model as m\n\ndef relu(x):\n    return m.relu(x)",
    "def relu(x):\n    return check.model.relu(x)",  # through the checkers' module
    "def relu(x):\n    return helper(x)",  # through a function of the student's own
])
def test_the_librarys_answer_handed_in_is_found(release, source):
    before = ("import nn_from_scratch.model as m\n\ndef helper(x):\n    return m.relu(x)",)
    assert copies(release, source, *before) == {"07.1": "relu"}


@pytest.mark.parametrize("source", [
    "def relu(x):\n    return jnp.maximum(0, x)",
    "relu = jax.nn.relu",  # JAX's, not the course's answer
    "from nn_from_scratch.model import predict\n\ndef relu(x):\n    return jnp.maximum(0, x)",
    "def relu(x):\n    m = 0\n    return jnp.maximum(m, x)",
])
def test_the_students_own_work_is_not(release, source):
    assert copies(release, source) == {}


def test_reaching_into_the_checkers_is_a_copy_of_their_reference(release):
    assert copies(release, "def relu(x):\n    return check.relu.__wrapped__(x)") == {
        "07.1": "relu"}


def test_the_twins_of_an_exercise_are_the_packages_functions_of_its_names():
    assert relu in twins({"relu"})
    assert twins({"no_such_function"}) == []
