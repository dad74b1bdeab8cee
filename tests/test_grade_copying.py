"""Copying the library's answer is found in the submitted source (grade/copying.py): imports,
aliases and wrappers of the exercise's own function in the library, or anything of the checkers'
package, are the library's own; the library used as the lessons use it is the student's work."""
import base64
import sys
from pathlib import Path

import pytest
from grading_fixtures import notebook, small_release

from nn_from_scratch.grade.copying import Copy, library_copies, twins
from nn_from_scratch.grade.rebuild import rebuild
from nn_from_scratch.grade.release import RELEASE, load_release
from nn_from_scratch.model import relu

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import notebooks  # noqa: E402  (the lesson tools: a lesson's solution and student editions)


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    return load_release("07_mlp_from_scratch", small_release(tmp_path_factory.mktemp("rel")))


def copies(release, exercise_source, *before):
    """What library_copies says of a submission whose first exercise (07.1 relu) is
    ``exercise_source``, after added cells ``before``."""
    cells = [("", source) for source in before] + [("exercise", exercise_source),
                                                    ("check", "check.relu(relu)")]
    return {exercise: copy.name if not copy.how else f"{copy.name}: {copy.how}"
            for exercise, copy in library_copies(rebuild(notebook(*cells), release),
                                                 release).items()}


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
    # red team, round fifteen: solved notebooks lost 1 to 7 points to objects of their own
    # class whose methods or attributes are named like IPython's or Python's namespaces
    "class Stack:\n    def __init__(self):\n        self.items = []\n\n    def push(self, x):\n"
    "        self.items.append(x)\n\n\ndef relu(x):\n    seen = Stack()\n"
    "    seen.push(jnp.maximum(0, x))\n    return seen.items[-1]",
    "class Config:\n    def __init__(self, **settings):\n        self.__dict__.update(settings)"
    "\n\n\ndef relu(x):\n    return jnp.maximum(Config(low=0).low, x)",
    "class Net:\n    def __init__(self):\n        self.modules = [jnp.abs]\n\n"
    "    def __call__(self, x):\n        return (x + self.modules[0](x)) / 2\n\n\n"
    "def relu(x):\n    return Net()(x)",
    "def relu(x):\n    gc = jnp.maximum(0, x)\n    return gc",
    # its second look: more of the student's own, each a solved notebook's 0/7 (6/7 for one)
    "class Stack:\n    def __init__(self):\n        self.items = []\n\n    def push(self, x):\n"
    "        self.items.append(x)\n\n\nclass History(Stack):\n"
    "    def __init__(self, losses=()):\n        super().__init__()\n        for loss in losses:\n"
    "            self.push(loss)\n\n\ndef relu(x):\n    return jnp.maximum(0, x)",
    "class Stack:\n    def __init__(self):\n        self.items = []\n\n    def push(self, x):\n"
    "        self.items.append(x)\n\n\nclass Queue:\n    def __init__(self, items=()):\n"
    "        self.inbox, self.outbox = Stack(), Stack()\n        for x in items:\n"
    "            self.inbox.push(x)\n\n\ndef relu(x):\n    return jnp.maximum(0, x)",
    "class Stack:\n    def push(self, x):\n        pass\n\n\ndef relu(x):\n"
    "    seen: Stack = Stack()\n    seen.push(x)\n    return jnp.maximum(0, x)",
    "gc = jax.grad(lambda x: jnp.sum(jnp.maximum(0, x)))(jnp.array([-1.0, 2.0]))\n"
    "print('slope:', gc)\n\n\ndef relu(x):\n    return jnp.maximum(0, x)",
    "class Config:\n    def __eq__(self, other):\n"
    "        return vars(self) == getattr(other, '__dict__', None)\n\n\n"
    "def relu(x):\n    return jnp.maximum(0, x)",
    "def relu(x):\n    return jnp.maximum(0, x)\n\n\n"
    "print(hasattr(jnp.zeros(3), '__setitem__'))",
])
def test_the_students_own_work_is_not(release, source):
    assert copies(release, source) == {}


@pytest.mark.parametrize("source, how", [
    # the same names on what is no object of the student's own class: IPython's shell
    ("class Stack:\n    def push(self, x):\n        pass\n\n\ndef relu(x):\n"
     "    ip = get_ipython()\n    ip.push({'relu': m.relu})\n    return x", "push()"),
    ("class Stack:\n    def push(self, x):\n        pass\n\n\ndef relu(x):\n"
     "    s = Stack()\n    s = get_ipython()\n    s.push({'relu': m.relu})\n    return x",
     "push()"),
    ("class Fake:\n    def push(self):\n        self = get_ipython()\n"
     "        self.push({'relu': m.relu})\n\n\ndef relu(x):\n    Fake().push()\n    return x",
     "push()"),
    # its second look: an own class whose __new__ hands over the shell
    ("class Stack:\n    def __new__(cls):\n        return get_ipython()\n\n"
     "    def push(self, x):\n        pass\n\n\ndef relu(x):\n    s = Stack()\n"
     "    s.push({'relu': m.relu})\n    return x", "push()"),
])
def test_a_method_named_like_the_shells_on_the_shell_itself_still_hides(release, source, how):
    found = copies(release, source, "import nn_from_scratch.model as m")
    assert found.get("07.1", "").endswith(how), found


def test_reaching_into_the_checkers_is_a_copy_of_their_reference(release):
    # (since round sixteen, __wrapped__ is more than an exercise may use: it earns nothing so)
    assert copies(release, "def relu(x):\n    return check.relu.__wrapped__(x)")["07.1"] == \
        "relu: the attribute __wrapped__"


def test_the_twins_of_an_exercise_are_the_packages_functions_of_its_names():
    assert relu in twins({"relu"})
    assert twins({"no_such_function"}) == []


# Issue 35, section 3: the library reached in ways a name alone does not show
SECRET = base64.b64encode(b"from nn_from_scratch.model import relu").decode()


@pytest.mark.parametrize("source, found", [
    ('relu = getattr(m, "relu")', "relu"),  # a constant string is followed like m.relu
    ('relu = getattr(m, "re" + "lu")', "relu: getattr()"),
    ('relu = functools.partial(getattr(m, "re" + "lu"))', "relu: getattr()"),
    ("relu = functools.partial(m.relu)", "relu"),
    ("class Relu:\n    def __call__(self, x):\n        return m.relu(x)\n\nrelu = Relu()",
     "relu"),
    ("class Relu:\n    __call__ = staticmethod(m.relu)\n\nrelu = Relu()", "relu"),
    ("relu = lambda x: m.relu(x)", "relu"),
    ("scale, relu = 2, m.relu", "relu"),
    ("def relu(x):\n    from nn_from_scratch.model import relu as r\n    return r(x)", "relu"),
    ("def relu(x):\n    import nn_from_scratch.exercises.mlp_from_scratch as c\n"
     "    return c.model.relu(x)", "relu"),
    ("def relu(x):\n    return check.model.relu(x)", "relu"),
    (f"exec(base64.b64decode({SECRET!r}))", "relu: exec()"),
    (f"def relu(x):\n    exec(base64.b64decode({SECRET!r}))\n    return x", "relu: exec()"),
    ('relu = vars(m)["relu"]', "relu: vars()"),
    ('relu = m.__dict__["relu"]', "relu: __dict__"),
    ('relu = importlib.import_module("nn_from_scratch.model").relu', "relu: import_module()"),
    ('relu = sys.modules["nn_from_scratch.model"].relu', "relu: modules"),
    ('globals()["relu"] = m.relu', "relu: globals()"),
])
def test_the_library_reached_by_string_alias_partial_object_or_decoded_text_earns_nothing(
        release, source, found):
    before = ("import functools\nimport nn_from_scratch.model as m",)  # (base64, importlib and
    # sys are more than an exercise may import: round sixteen)
    copied = copies(release, source, *before)
    assert copied["07.1"] == found, copied
    # (text run as code may patch the grader's answering object for good: every later answer
    # is in doubt too, since a red team's third look, round fifteen)
    # (and since round sixteen, so does a namespace's entry handed out: the grader's
    # answering object is one)
    how = found.partition(": ")[2]
    assert all(v.endswith(f": {how}") for e, v in copied.items() if e != "07.1") and (
        len(copied) == 1 or how in ("exec()", "vars()", "__dict__", "modules")), copied


def test_text_run_as_code_in_an_earlier_cell_puts_every_answer_in_doubt(release):
    # a def after it used to be visibly the student's own; a red team's third look (round
    # fifteen) ran text before each stub that patched the grader's answering object: 7/7 with
    # every stub raising. Text run as code now puts every answer after it in doubt too.
    assert copies(release, "def relu(x):\n    return jnp.maximum(0, x)",
                  f"exec(base64.b64decode({SECRET!r}))")["07.1"] == \
        "relu: exec()"
    assert copies(release, "pass", "def relu(x):\n    return jnp.maximum(0, x)",
                  f"exec(base64.b64decode({SECRET!r}))")["07.1"] == \
        "relu: exec()"


@pytest.mark.parametrize("look", [
    "print(vars())", "print(sorted(locals().keys()))", "names = sorted(globals())",
    "n = len(vars())", "shown = {k for k in globals() if not k.startswith('_')}",
    "'relu' in globals()", "print(globals().get('relu'))", "print(params.__dict__['w'])",
    "print(relu.__globals__['jnp'])",
    "print(getattr(m, 're' + 'lu'))", "for name in vars(params).keys():\n    print(name)",
    "print(', '.join(vars(params)))", "print('{params}'.format(**locals()))",
    # round seven's honest looks: vars() and __dict__ of an object the notebook made
    "import pprint\npprint.pprint(vars(params))",
    "import json\nprint(json.dumps(params.__dict__, default=str))",
    "fields = vars(params)\nprint(sorted(fields))",
    # vars() of what a call returns, shown by the standard library's readers (issue 35: an
    # honest look at an object the student's function made cost the answer its point)
    "import pprint\npprint.pprint(vars(make()))", "import pprint as pp\npp.pp(vars(make()))",
    "import json\ntext = json.dumps(vars(make()), default=str)",
    # ... and imported from their modules, under their names or others
    "from pprint import pprint\npprint(vars(make()))",
    "from pprint import pformat as show\ntext = show(vars(make()))",
    "from json import dumps\nprint(dumps(vars(make()), default=str))"])
def test_a_namespace_only_read_puts_no_answer_in_doubt(release, look):
    """Round six of the red team (honest students): a cell that looks at a namespace between
    an answer and its check cost the answer its point ("hides what it runs")."""
    before = ("import nn_from_scratch.model as m\nparams = type('P', (), {})()\n"
              "params.w = 1\ndef make():\n    return type('Q', (), {})()",
              "def relu(x):\n    return jnp.maximum(0, x)")
    assert copies(release, look, *before) == {}


@pytest.mark.parametrize("replaced", [
    "pprint.pprint = lambda ns: ns.update(relu=m.relu)",
    "alias = pprint\nalias.pprint = lambda ns: ns.update(relu=m.relu)",
    "def _later():\n    pprint.pprint = lambda ns: ns.update(relu=m.relu)\n\n_later()",
    "setattr(pprint, 'pprint', lambda ns: ns.update(relu=m.relu))",
    "pprint = type('P', (), {'pprint': staticmethod(lambda ns: ns.update(relu=m.relu))})"])
def test_a_reader_replaced_before_the_answer_reads_no_namespace(release, replaced):
    """The readers ``pprint.pprint`` and ``json.dumps`` vouch for a look only while nothing
    could have replaced them: replaced before the answer's def, then handed the module's
    namespace after it, they bind the library's relu unseen."""
    before = "import pprint\nimport nn_from_scratch.model as m\n" + replaced
    found = copies(release, "def relu(x):\n    return jnp.maximum(0, x)\n\n\n"
                            "pprint.pprint(vars())", before)
    assert "07.1" in found and found["07.1"].startswith("relu"), found
    # and not replaced: the same look is only read
    assert copies(release, "def relu(x):\n    return jnp.maximum(0, x)\n\n\n"
                           "pprint.pprint(vars())", "import pprint") == {}


@pytest.mark.parametrize("replaced", [
    "pprint = lambda ns: ns.update(relu=m.relu)",  # the name bound again
    "pprint.pprint = lambda ns: ns.update(relu=m.relu)\nfrom pprint import pprint",
    "import pprint as p\np.pprint = lambda ns: ns.update(relu=m.relu)\nfrom pprint import pprint",
    "for pprint in [lambda ns: ns.update(relu=m.relu)]:\n    pass",
    "from pprint import pformat as pprint\ndef _later():\n    globals()['pprint'] = "
    "lambda ns: ns.update(relu=m.relu)\n\n_later()",
    "exec('pprint = lambda ns: ns.update(relu=m.relu)')"])
def test_a_reader_imported_from_its_module_vouches_only_while_it_is_that_reader(
        release, replaced):
    """``from pprint import pprint`` vouches for ``pprint(vars())`` (an honest look), but not
    once the name is bound again, the module's function was replaced before the import, or
    something hid what it binds."""
    before = "import pprint\nfrom pprint import pprint\nimport nn_from_scratch.model as m\n" + \
        replaced
    found = copies(release, "def relu(x):\n    return jnp.maximum(0, x)\n\n\n"
                            "pprint(vars())", before)
    assert "07.1" in found and found["07.1"].startswith("relu"), found
    assert copies(release, "def relu(x):\n    return jnp.maximum(0, x)\n\n\npprint(vars())",
                  "from pprint import pprint") == {}


@pytest.mark.parametrize("write, how", [
    ('globals()["relu"] = m.relu', "globals()"), ("globals().update(relu=m.relu)", "globals()"),
    ('vars()["relu"] = m.relu', "vars()"), ("g = globals()", "globals()"),
    ("keep(globals())", "globals()"), ('sys.modules["__main__"].relu = m.relu', "modules"),
    ('setattr(sys.modules[__name__], "relu", m.relu)', "modules"),  # (its entry handed out)
    ('(lambda: 0).__globals__["relu"] = m.relu', "__globals__"),
    # round seven: writes spelt so that a list of write shapes missed them
    ('[globals()][0]["relu"] = m.relu', "globals()"),
    ('globals().get.__self__["relu"] = m.relu', "globals()"),  # (its get handed out)
    ('(globals() or 0)["relu"] = m.relu', "globals()"),
    ('(globals() if 1 else 0)["relu"] = m.relu', "globals()"),
    ('next(iter([globals()]))["relu"] = m.relu', "globals()"),
    ('dict.__setitem__(*[globals()], "relu", m.relu)', "globals()"),  # handed on, in a list
    ('sys.modules.get("__main__").relu = m.relu', "modules"),
    ('sys.modules.__getitem__("__main__").relu = m.relu', "modules"),
    # kept as a write: an alias may be written through later, unseen
    ("f = globals().get('relu')", "globals()"),
    # vars() of what is no object the notebook made (a module, an unknown name)
    ("vars(m)['relu'] = m.relu", "vars()"), ("m.__dict__['relu'] = m.relu", "__dict__"),
    # round seven: code that runs when a def or a class statement runs, or a helper called
    ("def _setup():\n    globals()['relu'] = m.relu\n\n_setup()", "globals()"),
    ('class _Notes:\n    """relu = m.relu"""\n    exec(__doc__)', "exec()"),
    ("def _warm(_=exec('relu = m.relu')):\n    pass", "exec()"),
    ("def _keep(f):\n    exec('relu = m.relu')\n    return f\n\n@_keep\ndef other():\n"
     "    pass", "exec()"),
    ('def _tidy():\n    exec(relu.__doc__)\n\n_tidy()', "exec()"),
    ])
def test_a_namespace_written_puts_the_answers_bound_before_in_doubt(release, write, how):
    before = ("import nn_from_scratch.model as m\ndef keep(ns):\n    pass\n"  # (sys, unbound:
              "params = type('P', (), {})()", "def relu(x):\n    return jnp.maximum(0, x)")
    # imported, it is more than an exercise may use, round sixteen)
    found = copies(release, write, *before)  # (a namespace handed on, an argument or in a
    # list, may be written through after it too: every later answer in doubt as well)
    assert found.get("07.1") == f"relu: {how}", found
    assert all(v.endswith(f": {how}") for v in found.values()), found


@pytest.mark.parametrize("attack, how", [
    # a magic's cell was skipped whole: IPython's syntax is read as the kernel runs it
    ("%%capture\nrelu = lambda x: m.relu(x)", ""),
    ("%xmode Plain\nrelu = lambda x: m.relu(x)", ""),
    ("%time relu = lambda x: m.relu(x)", ""),
    ("%env X=1\nx = 1", "%env"),
    # exec and its kin kept or passed under another name
    ('run = exec\nrun("relu = m.relu")', "exec"),
    ('x = [exec]\nx[0]("relu = m.relu")', "exec"),
    ('list(map(exec, ["relu = m.relu"]))', "exec"),
    ('from builtins import exec as run\nrun("relu = m.relu")', "builtins"),
    ('getattr(print.__self__, "ex" + "ec")("relu = m.relu")', "__self__"),
    # IPython's shell
    ('exit._ip.user_ns["relu"] = m.relu', "user_ns"),
    ('quit._ip.push({"relu": m.relu})', "push()"),
    # helpers reached other than by a plain call, or deeper than four calls
    ("def _a():\n    globals()['relu'] = m.relu\n\ndef _b():\n    _a()\n\ndef _c():\n"
     "    _b()\n\ndef _d():\n    _c()\n\ndef _e():\n    _d()\n\ndef _f():\n    _e()\n\n_f()",
     "globals()"),
    ("list(map(_setup, [0]))", "globals()"), ("_go = [_setup]\n_go[0]()", "globals()"),
    ("_k = _K()\n_k.go()", "globals()"),
])
def test_round_eights_ways_to_bind_unseen(release, attack, how):
    """Red team, round eight: each bound relu to the library's, unseen by the reading."""
    before = ("import nn_from_scratch.model as m\n\ndef _setup(*_):\n"
              "    globals()['relu'] = m.relu\n\nclass _K:\n    def go(self):\n"
              "        globals()['relu'] = m.relu",
              "def relu(x):\n    return jnp.maximum(0, x)")
    found = copies(release, attack, *before)
    assert "07.1" in found and found["07.1"].startswith("relu"), found
    if how:
        assert found["07.1"] == f"relu: {how}", found


@pytest.mark.parametrize("honest", [
    'IN_COLAB = "google.colab" in str(get_ipython())\nprint(IN_COLAB)',
    "get_ipython().run_line_magic('matplotlib', 'inline')", "%matplotlib inline",
    "%time y = relu(jnp.ones(3))",
    "import matplotlib\nfrom matplotlib.colors import ListedColormap\n"
    "matplotlib.colormaps.register(ListedColormap(['r', 'g']), name='rg_test')",
    "import functools\n\n@functools.singledispatch\ndef show(x):\n    print(x)\n\n"
    "@show.register\ndef _(x: int):\n    print('int', x)"])
def test_round_eights_honest_cells_put_nothing_in_doubt(release, honest):
    """Red team, round eight: a Colab check, nbconvert's magic, a colormap or a
    singledispatch registered cost an honest notebook every exercise."""
    assert copies(release, honest, "def relu(x):\n    return jnp.maximum(0, x)") == {}


def test_a_hook_puts_even_the_names_bound_after_it_in_doubt(release):
    """Round seven: a post_run_cell hook registered before a visible def rebinds the answer
    after the cell; a tracer or a change to builtins can do the same."""
    hook = ("get_ipython().events.register('post_run_cell', lambda *a: globals().update("
            "relu=lambda x: __import__('nn_from_scratch').model.relu(x)))")
    for source, how in ((hook, "register"), ("sys.settrace(None)", "settrace"),
                        ("import builtins\nbuiltins.print = print", "builtins")):
        found = copies(release, "def relu(x):\n    return jnp.maximum(0, x)", source)
        assert found["07.1"] == f"relu: {how}" and len(found) == len(set(found)) > 1, found


@pytest.mark.parametrize("walk", [
    "import gc\n_answers = [o for o in gc.get_objects() if type(o).__name__ == 'Answers']",
    "from gc import get_referrers as _r",
    "import gc\n_walk = getattr(gc, 'get_objects')",
    "import gc\n\ndef _found(name):\n    return [o for o in gc.get_referents(name)]",
    "import gc as g",
    "_gc = __import__('gc')",
    # round fourteen's second look: the answering object's class among object's subclasses
    "_kind = next(c for c in object.__subclasses__() if c.__name__ == 'Answers')",
    "import inspect\n_caller = inspect.currentframe().f_back",
    "import inspect\n_frames = inspect.stack()",
    "_f = sys._getframe(1).f_globals",  # (imported, sys is more than an exercise may use)
])
def test_a_walk_of_the_garbage_collectors_puts_every_answer_in_doubt(release, walk):
    """Red team, round fourteen: an added cell found the grader's answering object with
    gc.get_objects() (its type's name, nothing of the package named) and made it hand each
    check the library's function: 5 of 7 points for a notebook with no answer written. A
    walk of the collector's reaches any object, so every answer, before or after it, earns
    nothing, and the hint says why."""
    found = library_copies(rebuild(notebook(
        ("", walk), ("exercise", "def relu(x):\n    return jnp.maximum(0, x)"),
        ("check", "check.relu(relu)")), release), release)
    assert found["07.1"].doubt == "reaches", found
    assert found["07.1"].message.endswith(" reaches any object in the kernel, the grader's "
                                          "own included, so relu earns nothing; leave it out")


def test_a_helper_of_the_students_own_named_push_hides_nothing(release):
    """A student's walk (round fourteen): IPython's shell.push(...) binds names unseen, and
    any call named push was read as it: an honest backward with a helper push(parent, share)
    earned nothing. A plain name called is the student's own function; a method still counts."""
    helper = "def push(x):\n    return x\n\ndef relu(x):\n    return jnp.maximum(0, push(x))"
    assert copies(release, helper) == {}
    assert copies(release, "def relu(x):\n    get_ipython().push({'y': 0})\n"
                  "    return jnp.maximum(0, x)") == {"07.1": "relu: push()"}


@pytest.mark.parametrize("honest", [
    "import gc\ngc.collect()\ngc.disable()",
    # the red team's second look: an honest helper named get_objects, and a string, cost two
    # solved notebooks every point
    "def get_objects(store):\n    return list(store)\n\nprint(get_objects([1, 2]))",
    "names = {'get_objects': 1, 'gc': 2}",
    "class Store:\n    def get_objects(self):\n        return []\n\n"
    "    def all(self):\n        return self.get_objects()",
    "import inspect\nprint(inspect.getsource(jnp.maximum)[:10])",
    "stacked = jnp.stack([jnp.ones(2)] * 3)",
])
def test_honest_code_that_looks_like_a_walk_reaches_nothing(release, honest):
    assert copies(release, "def relu(x):\n    return jnp.maximum(0, x)", honest) == {}


@pytest.mark.parametrize("binder", [
    "for relu in [lambda x: m.relu(x)]:\n    pass",
    "if True:\n    relu = lambda x: m.relu(x)",
    "(relu := lambda x: m.relu(x))",
    "with open('/dev/null') as f:\n    relu = m.relu",
    "if True:\n    from nn_from_scratch.model import relu",
    "try:\n    relu = m.relu\nexcept Exception:\n    pass"])
def test_a_name_bound_in_a_block_a_loop_or_a_walrus_is_read(release, binder):
    """Round three, still open in round seven: binders other than a plain assignment."""
    before = ("import nn_from_scratch.model as m", "def relu(x):\n    return jnp.maximum(0, x)")
    assert copies(release, binder, *before) == {"07.1": "relu"}


def test_the_honest_solution_with_jit_compile_and_getattr_of_its_own_is_its_own(release):
    honest = ("def relu(x):\n    text = jax.jit(jnp.tanh).lower(x).compile().as_text()\n"
              "    return getattr(jnp, 'maximum')(0, x)")
    assert copies(release, honest) == {}
    # (a program compiled ahead and kept runs no Python where the grader watches: red team,
    # round twenty-three; read at once, as lesson 13 reads one, it is no program kept)
    kept = honest.replace(".compile().as_text()", ".compile()")
    assert copies(release, kept)["07.1"] == "relu: the attribute compile"


def test_the_message_says_why_in_either_case():
    assert Copy("predict").message == "this is the library's own predict; write your own"
    assert Copy("predict", "exec()").message == (
        "your code for predict uses exec(), which hides what it runs from the grader; write "
        "the code itself")
    # in doubt: what hid a binding ran after the code, not in it (round ten's honest notebooks
    # were told their relu "uses vars()")
    assert Copy("relu", "vars()", "after").message == (
        "vars() ran after your code for relu and may have bound relu again where the grader "
        "cannot see, so this exercise earns nothing; leave vars() out, or look at names with "
        "print")
    assert Copy("relu", "S.__repr__: globals()", "anytime").message == (
        "S.__repr__: globals() may bind names where the grader cannot see, after any cell (a "
        "hook, a method Python calls by itself, text run as code, a namespace kept or handed "
        "on), so relu earns nothing; leave it out")


@pytest.mark.parametrize("lesson", sorted(p.stem for p in RELEASE.glob("*.json")))
def test_every_lessons_own_solution_is_the_students_own_work(lesson):
    solution, _student = notebooks.editions(ROOT / "lessons" / f"{lesson}.md")
    released = load_release(lesson)
    assert library_copies(rebuild(solution, released), released) == {}


def test_a_parse_lost_to_another_threads_ast_is_tried_again(monkeypatch):
    """CPython 3.11 keeps the AST constructor's depth count per interpreter: an AST built in
    another thread (``traceback`` builds one) can fail a parse that is not the source's fault."""
    import ast

    from nn_from_scratch import parsing

    real, calls = ast.parse, []

    def raced(source):
        calls.append(source)
        if len(calls) < 3:
            raise SystemError("AST constructor recursion depth mismatch (before=36, after=32)")
        return real(source)

    monkeypatch.setattr(parsing.ast, "parse", raced)
    assert isinstance(parsing.parse("x = 1"), ast.Module) and len(calls) == 3
    monkeypatch.setattr(parsing.ast, "parse", lambda source: (_ for _ in ()).throw(
        SystemError("some other failure")))
    with pytest.raises(SystemError, match="some other failure"):
        parsing.parse("x = 1")


# Red team, round ten: each cell got 07.1 a point with the library's relu in place, the reading
# finding nothing (readers and relu rebound where it did not look: a block's import that never runs,
# `global` in a called function, `match` captures, `import *`, methods Python calls by itself, a
# chain of helpers past the depth followed); the library reached through the notebook's `check`.
ROUND_TEN = {
    "if_false_import_reader": (
        'def relu(x):\n'
        '    return x\n'
        'pprint = dict.update\n'
        'if False:\n'
        '    from pprint import pprint\n'
        'pprint(globals(), relu=(lambda x: check.model.relu(x)))\n'),
    "def_in_if_import_reader": (
        'def relu(x):\n'
        '    return x\n'
        'pprint = dict.update\n'
        'if True:\n'
        '    def g():\n'
        '        from pprint import pprint\n'
        'pprint(globals(), relu=(lambda x: check.model.relu(x)))\n'),
    "global_rebinds_reader": (
        'def relu(x):\n'
        '    return x\n'
        'from pprint import pprint\n'
        'def f():\n'
        '    global pprint\n'
        '    pprint = dict.update\n'
        'f()\n'
        'pprint(globals(), relu=(lambda x: check.model.relu(x)))\n'),
    "match_capture_reader": (
        'def relu(x):\n'
        '    return x\n'
        'from pprint import pprint\n'
        'match dict.update:\n'
        '    case pprint:\n'
        '        pass\n'
        'pprint(globals(), relu=(lambda x: check.model.relu(x)))\n'),
    "star_import_rebinds_reader": (
        'def relu(x):\n'
        '    return x\n'
        'from pprint import pprint\n'
        "open('m11.py', 'w').write('pprint = dict.update\\n')\n"
        'import sys\n'
        "sys.path.insert(0, '.')\n"
        'from m11 import *\n'
        'pprint(globals(), relu=(lambda x: check.model.relu(x)))\n'),
    "pprint_repr_decorated_instance": (
        'from pprint import pprint\n'
        '@lambda c: c()\n'
        'class s:\n'
        '    def __repr__(self):\n'
        "        globals()['relu'] = (lambda x: check.model.relu(x))\n"
        "        return 's'\n"
        'def relu(x):\n'
        '    return x\n'
        "pprint(globals()['s'])\n"),
    "module_form_if_false": (
        'def relu(x):\n'
        '    return x\n'
        'import types\n'
        'pprint = types.SimpleNamespace(pprint=dict.update)\n'
        'if False:\n'
        '    import pprint\n'
        'pprint.pprint(globals(), relu=(lambda x: check.model.relu(x)))\n'),
    "module_form_global": (
        'def relu(x):\n'
        '    return x\n'
        'import pprint, types\n'
        'def f():\n'
        '    global pprint\n'
        '    pprint = types.SimpleNamespace(pprint=dict.update)\n'
        'f()\n'
        'pprint.pprint(globals(), relu=(lambda x: check.model.relu(x)))\n'),
    "global_in_func_wrongdef": (
        'def relu(x):\n'
        '    return x\n'
        'def f():\n'
        '    global relu\n'
        '    relu = (lambda x: check.model.relu(x))\n'
        'f()\n'),
    "match_capture_relu": (
        'def relu(x):\n'
        '    return x\n'
        'match (lambda x: check.model.relu(x)):\n'
        '    case relu:\n'
        '        pass\n'),
    "match_star_relu": (
        'def relu(x):\n'
        '    return x\n'
        'match [(lambda x: check.model.relu(x))]:\n'
        '    case [*relu]:\n'
        '        pass\n'
        'relu = relu[0]\n'),
    "match_capture_relu_nonote": (
        'def relu(x):\n'
        '    return x\n'
        'match check.model:\n'
        '    case object(relu=relu0):\n'
        '        pass\n'
        'match (lambda x: relu0(x)):\n'
        '    case relu:\n'
        '        pass\n'),
    "star_import_file": (
        'def relu(x):\n'
        '    return x\n'
        "open('m10.py', 'w').write('relu = lambda x: check.model.relu(x)\\n')\n"
        'import sys\n'
        "sys.path.insert(0, '.')\n"
        'import m10\n'
        'm10.check = check\n'
        'from m10 import *\n'),
    "depth_chain": (
        'def f1(x):\n'
        '    return f2(x)\n'
        'def f2(x):\n'
        '    return f3(x)\n'
        'def f3(x):\n'
        '    return f4(x)\n'
        'def f4(x):\n'
        '    return f5(x)\n'
        'def f5(x):\n'
        '    return f6(x)\n'
        'def f6(x):\n'
        '    return f7(x)\n'
        'def f7(x):\n'
        '    return check.model.relu(x)\n'
        'def relu(x):\n'
        '    return f1(x)\n'),
    "repr_writes_print": (
        'class S:\n'
        '    def __repr__(self):\n'
        "        globals()['relu'] = (lambda x: check.model.relu(x))\n"
        "        return 's'\n"
        's = S()\n'
        'def relu(x):\n'
        '    return x\n'
        "print(globals()['s'])\n"),
    "format_kw": (
        'class S:\n'
        '    def __format__(self, spec):\n'
        "        globals()['relu'] = (lambda x: check.model.relu(x))\n"
        "        return 's'\n"
        's = S()\n'
        'def relu(x):\n'
        '    return x\n'
        "print('{s}'.format(**globals()))\n"),
    "bool_sorted_key": (
        'class S:\n'
        '    def __bool__(self):\n'
        "        globals()['relu'] = (lambda x: check.model.relu(x))\n"
        '        return True\n'
        's = S()\n'
        'def relu(x):\n'
        '    return x\n'
        'print(len(sorted(globals().values(), key=bool)))\n'),
    "print_repr_decorated_instance_nonote_try": (
        '@lambda c: c()\n'
        'class s:\n'
        '    def __repr__(self):\n'
        '        import sys\n'
        '        sys.modules[__name__].relu = (lambda x: check.model.relu(x))\n'
        "        return 's'\n"
        'def relu(x):\n'
        '    return x\n'
        'print(dict(globals()))\n'),
}


@pytest.mark.parametrize("name", ROUND_TEN)
def test_round_ten_rebindings_the_reading_missed_earn_nothing(release, name):
    assert "07.1" in copies(release, ROUND_TEN[name])  # a copy, or relu in doubt


def test_round_ten_honest_neighbours_keep_their_point(release):
    """What the fixes must not take: a def that declares a global it only counts with, a match
    that captures other names, the package's own names imported with "*" seen as the package's,
    a class with an honest __repr__ printed, a chain of helpers three deep."""
    honest = ("count = 0\ndef tick():\n    global count\n    count += 1\n\ntick()\n"
              "match (1, 2):\n    case (a, b):\n        pass\n"
              "class P:\n    def __repr__(self):\n        return 'P()'\n\n"
              "print(globals()['count'], P())\n"
              "def h3(x):\n    return jnp.maximum(0, x)\ndef h2(x):\n    return h3(x)\n"
              "def h1(x):\n    return h2(x)\ndef relu(x):\n    return h1(x)")
    assert copies(release, honest) == {}
    assert copies(release, "def relu(x):\n    return jnp.maximum(0, x)",
                  "from nn_from_scratch.losses import *") == {}
    assert copies(release, "from nn_from_scratch.model import *") == {"07.1": "relu"}


@pytest.mark.parametrize("write", [
    "import __main__ as data\nvars(data)['relu'] = m.relu",
    "if True:\n    import __main__ as data\nvars(data)['relu'] = m.relu",
    "import __main__ as _m\n_m.relu = m.relu",  # red team, round fifteen (A3): 5/7 with stubs
    ])
def test_the_notebooks_namespace_kept_as_a_module_puts_every_answer_in_doubt(release, write):
    """``import __main__`` hands on the notebook's namespace as a module: any cell, before or
    after, may write an answer through it where no reading sees it."""
    before = ("import nn_from_scratch.model as m", "def relu(x):\n    return x")
    found = copies(release, write, *before)
    assert found["07.1"] == "relu: import __main__" and len(found) >= 3, found
    assert all(how.endswith(": import __main__") for how in found.values()), found


@pytest.mark.parametrize("keep, write", [
    ("box = []\nbox.append(globals())", "box[0]['relu'] = m.relu"),  # its second look
    ("box = [None]\nbox[0] = globals()", "box[0]['relu'] = m.relu"),
    ("box = {'ns': vars()}", "box['ns']['relu'] = m.relu"),
])
def test_a_namespace_handed_where_the_reading_does_not_follow_puts_every_answer_in_doubt(
        release, keep, write):
    found = copies(release, f"def relu(x):\n    raise NotImplementedError\n\n\n{write}",
                   "import nn_from_scratch.model as m\n" + keep)
    assert "07.1" in found and len(found) >= 3, found


@pytest.mark.parametrize("write", [
    "g = globals()",  # kept: written through in a later cell, unseen
    "_ns = get_ipython().ns_table['user_global']",  # red team, round fifteen (A1, A7, A19)
    "from IPython import InteractiveShell as _S\n_ns = _S.instance().ns_table['user_global']",
    ])
def test_a_namespace_kept_under_a_name_and_written_later_puts_that_answer_in_doubt(release,
                                                                                  write):
    """A namespace kept in an earlier cell, written through in the exercise's cell after its
    stub: the stub is not what the check meets (5/7 with every stub raising, round fifteen)."""
    written = "g['relu'] = m.relu" if write.startswith("g ") else "_ns['relu'] = m.relu"
    found = copies(release, f"def relu(x):\n    raise NotImplementedError\n\n\n{written}",
                   "import sys\nimport nn_from_scratch.model as m\n" + write)
    assert "07.1" in found and found["07.1"].startswith("relu: "), found


@pytest.mark.parametrize("patch", [
    # a red team's third look, round fifteen: the grader's answering object patched by text
    # run before each stub, and through sys.modules by names made at run time (7/7 and 5/7)
    "exec('import nn_from_scratch.model as _M')",
    "import sys\n_a, _b = 'mod', 'nn_from_scratch.gra'\n"
    "_Ans = getattr(sys, _a + 'ules')[_b + 'de.answers'].Answers",
    "import sys\n_a = 'mod'\n_m = getattr(sys, _a + 'ules')",
])
def test_what_may_patch_the_grader_for_good_puts_every_later_answer_in_doubt(release, patch):
    found = copies(release, "def relu(x):\n    raise NotImplementedError", patch)
    assert "07.1" in found and len(found) >= 3, found
