"""What crosses between the grader and a kernel (wire.py, grade/answers.py): plain data that
keeps its kind, handles for the rest, never a function the kernel names run by the grader, and
exceptions that keep their class where the grader knows it."""
import json
from collections import namedtuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from nn_from_scratch import autodiff, wire
from nn_from_scratch.exercises import _fixtures
from nn_from_scratch.exercises._core import Mistake
from nn_from_scratch.exercises._remote import RemoteFunction, beside, same_object, transformed
from nn_from_scratch.grade.answers import Answers
from nn_from_scratch.grade.checking import InProcess


def through(value, named=True):
    """``value`` sent and read back, through JSON text, as between the two processes."""
    return wire.decode(json.loads(json.dumps(wire.encode(value, named=named))), {}.__getitem__,
                       named=named)


def test_plain_data_keeps_its_kind():
    values = [None, ..., True, 3, 2**60, 2.5, float("inf"), "text", [1, (2, 3)], (4,),
              {"w": 1.0, 3: "b"}, np.arange(6, dtype=np.int16).reshape(2, 3),
              np.float32(1.5), np.array(True)]
    for value in values:
        back = through(value)
        assert type(back) is type(value), value
        if isinstance(value, np.ndarray):
            assert back.dtype == value.dtype and np.array_equal(back, value)
        elif value == value:  # not NaN
            assert back == value


def test_jax_arrays_keys_and_weak_types_survive():
    array = jnp.arange(4.0)
    back = through(array)
    assert isinstance(back, jax.Array) and back.dtype == jnp.float32
    assert np.array_equal(back, array)
    assert through(jnp.asarray(2.0)).weak_type and not through(jnp.float32(2.0)).weak_type
    key = jax.random.key(7)
    assert np.array_equal(jax.random.key_data(through(key)), jax.random.key_data(key))
    with jax.enable_x64(True):
        wide = jnp.asarray(np.float64(1e8 + 1))
    assert through(wide).dtype == np.float64  # a float64 answer stays float64


def test_a_named_tuple_of_a_known_package_crosses_but_not_another():
    import optax

    state = optax.sgd(0.1, momentum=0.9).init([jnp.ones(2)])
    back = through(state)
    assert type(back) is type(state) and type(back[0]).__name__ == "TraceState"
    mine = namedtuple("Mine", "a b")(1, 2)
    with pytest.raises(TypeError, match="not plain data"):
        wire.encode(mine)


def test_functions_cross_by_name_from_the_grader_only():
    assert through(np.add) is np.add and through(_fixtures.cube) is _fixtures.cube
    kernel_says = {"t": "ref", "v": "builtins:exec"}
    with pytest.raises(ValueError, match="unknown kind"):  # a kernel cannot make the grader run it
        wire.decode(kernel_says, {}.__getitem__)
    with pytest.raises(ValueError, match="not something the grader lets cross"):
        wire.decode({"t": "ref", "v": "os:system"}, {}.__getitem__, named=True)
    with pytest.raises(ValueError, match="not a named tuple"):
        wire.decode({"t": "namedtuple", "ref": "builtins:eval", "v": []}, {}.__getitem__)


def test_errors_keep_their_class_and_never_one_that_stops_the_grader():
    def crossed(err):
        return wire.decode_error(json.loads(json.dumps(wire.encode_error(err))),
                                 {"nn_from_scratch.exercises._outcomes.Mistake": Mistake})

    assert type(crossed(ValueError("v"))) is ValueError
    assert type(crossed(Mistake("hint"))) is Mistake and str(crossed(Mistake("hint"))) == "hint"
    from nn_from_scratch._checks import InputError
    err = crossed(InputError("a batch of 10"))
    assert type(err).__name__ == "InputError" and isinstance(err, ValueError)
    assert type(crossed(jax.errors.TracerBoolConversionError.__new__(
        jax.errors.TracerBoolConversionError))) is jax.errors.TracerBoolConversionError
    for stopper in (SystemExit(), KeyboardInterrupt()):
        err = crossed(stopper)
        assert isinstance(err, Exception) and type(err).__name__ == type(stopper).__name__
    try:
        raise ValueError("outer") from TypeError("inner")
    except ValueError as raised:
        assert type(crossed(raised).__cause__) is TypeError


def test_a_kernel_that_answers_gibberish_gives_a_wrong_answer_not_a_crash():
    session = InProcess({})
    session.ask = lambda question: {"value": {"t": "handle", "id": "x"}}
    with pytest.raises(ValueError):
        session.lookup("anything")
    session.ask = lambda question: ["not", "an", "answer"]
    with pytest.raises(ValueError, match="not an answer"):
        session.lookup("anything")


def test_objects_stay_where_they_were_made_and_keep_their_identity():
    def mul(a, b):
        return autodiff.Value(a.data * b.data, parents=(a, b), local_grads=(b.data, a.data),
                              op="*")

    session = InProcess({"mul": mul})
    student = session.lookup("mul")
    assert isinstance(student, RemoteFunction) and student.name == "mul"
    a, b = beside(student, autodiff.Value, 2.0), beside(student, autodiff.Value, -3.0)
    out = student(a, b)
    assert out.data == -6.0 and out.local_grads == (-3.0, 2.0) and out.op == "*"
    assert out.parents[0] is a and out.parents[1] is b  # one proxy per kernel object
    session.forget()
    assert session.answers.objects == {}


def test_the_kernel_says_what_a_function_is_and_the_grader_runs_transforms_there():
    from nn_from_scratch.model import relu

    session = InProcess({"relu": relu, "mine": lambda x: x * 2, "softplus": jax.nn.softplus})
    library = session.lookup("relu")
    assert library._about["ref"] == "nn_from_scratch.model:relu"
    assert same_object(session.lookup("softplus"), jax.nn.softplus)
    mine = session.lookup("mine")
    assert not same_object(mine, jax.nn.softplus)
    jitted = transformed(mine, jax.jit, (jax.vmap, {"in_axes": 0}))
    assert np.array_equal(jitted(np.arange(3.0)), [0.0, 2.0, 4.0])
    assert isinstance(session.answers.objects[jitted._number], type(jax.vmap(abs)))


def test_answers_never_raise_and_name_an_unknown_answer_as_python_would():
    answers = Answers({})
    reply = answers(json.dumps({"op": "lookup", "name": "predict"})).data
    assert reply["error"]["type"] == "NameError"
    assert "predict" in reply["error"]["message"]
    assert "error" in answers("{ not json").data
