"""What an exercise's code may use (grade/allowed.py), and red team round sixteen's attacks:
each earned 5 or 6 of lesson 07's 7 points with every stub raising, where a reading for what
must not be done had no name for it; and the honest code that round found losing points."""
import ast
from pathlib import Path

import nbformat
import pytest
from grading_fixtures import notebook, small_release

from nn_from_scratch.grade.allowed import outside, outside_how
from nn_from_scratch.grade.copying import library_copies
from nn_from_scratch.grade.modules import MODULES
from nn_from_scratch.grade.rebuild import rebuild
from nn_from_scratch.grade.release import RELEASE, load_release

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    return load_release("07_mlp_from_scratch", small_release(tmp_path_factory.mktemp("rel")))


def doubts(release, *cells, exercise="def relu(x):\n    raise NotImplementedError"):
    """Exercise -> (how, doubt) for a submission of added cells ``cells`` before 07.1's cell
    ``exercise`` (its stub), each exercise's check after it."""
    return {e: (c.how, c.doubt) for e, c in library_copies(rebuild(notebook(
        *[("", source) for source in cells], ("exercise", exercise),
        ("check", "check.relu(relu)")), release), release).items()}


@pytest.mark.parametrize("code, how", [
    ("import pickle", "the module pickle"), ("from timeit import timeit", "the module timeit"),
    ("import os.path", "the module os.path"), ("from . import x", "the module ."),
    ("import helper_mod", "the module helper_mod"),  # a module the notebook wrote itself
    ("def f():\n    import cProfile", "the module cProfile"),
    ("x = np.testing.sys", "the module sys"), ("f.__func__(other)", "the attribute __func__"),
    ("getattr(f, '__fu' + 'nc__')", "the attribute __func__"),
    ("x.__class__ = Other", "the attribute __class__"),
    ("__import__('pickle')", "the module pickle"), ("__import__(name)", "the module named "
                                                                         "at run time"),
    ("pkgutil.resolve_name('nn_from_scratch.model')", "the module pkgutil"),
    ("inspect.getmodule(f)", "the module inspect"), ("inspect.getsource(f)", ""),
    ("from inspect import getsource", ""), ("from inspect import getmodule", "the module inspect"),
    ("import gc\ngc.collect()", ""), ("x = self.__class__.__name__", ""),
    ("super().__init__()", ""), ("print(jax.__version__)", ""),
    ("import jax.numpy as jnp\nfrom functools import partial\nimport math, itertools", ""),
    # a second look at round sixteen: 7/7 each, every stub answered by the patched grader
    ('getattr(typing, "get_type_hints")(f)', "the function get_type_hints"),
    ("typing.get_type_hints(f)", "the function get_type_hints"),
    ('getattr(getattr(dataclasses, "builtins"), "exec")', "the module builtins"),
    ('getattr(getattr(np, "core").numeric, "builtins")', "the module builtins"),
    ('inspect.signature(f, **{"eval_str": True})', "the module inspect"),
    ('operator.attrgetter("__globals__")(f)', "the attribute __globals__"),
    ("operator.attrgetter(name)(f)", "the function attrgetter"),
    ("sys.modules", "the module sys"), ("sys.path.insert(0, '/tmp')", "the module sys"),
    ('relu.__name__ = "x"', "the attribute __name__"),
    # ...and its honest lines, that lost points
    ('import warnings\nwarnings.filterwarnings("ignore")', ""), ("from tqdm import tqdm", ""),
    ("import sys\nEPS = sys.float_info.epsilon", ""), ("print(1, file=sys.stderr)", ""),
    ("from IPython.display import display\ndisplay(1)", ""), ('relu.__doc__ = "x"', ""),
    ('operator.attrgetter("shape")(x)', ""), ("from pathlib import Path", ""),
    ("import traceback\ntraceback.print_exc()", ""), ('hasattr(x, "__array_interface__")', ""),
    # annotations' strings, which typing and singledispatch's register run as code
    ('def f(x: "exec(text)"):\n    pass', "the annotation 'exec(text)'"),
    ('x: "(lambda: 1)()" = 1', "the annotation '(lambda: 1)()'"),
    ('def f(x: "Node") -> "list[int] | None":\n    pass', ""),
    ("f.__annotations__['x'] = text", "the attribute __annotations__"),
    # a third look: another module under another name, or a module's private name
    ("from enum import bltns as b", "the module builtins"),
    ("e = enum.bltns.exec", "the module builtins"), ("from random import _os", "the attribute _os"),
    ("random._os.system('true')", "the attribute _os"),
    ("np.linalg.norm(x)", ""), ("from jax import numpy as jnp", ""),
    # a fourth look: functions of allowed modules that run a string, a file or a pickle
    ("np.testing.runstring(text, {})", "the function runstring"),
    ("from numpy.testing import measure", "the function measure"),
    ('getattr(getattr(np, "testing"), "rundocs")(path)', "the function rundocs"),
    ("string.Formatter().get_field('0.__globals__', (f,), {})", "the function Formatter"),
    ("np.load(path, allow_pickle=True)", "the function load(allow_pickle=...)"),
    ("np.load(path, allow_pickle=ok)", "the function load(allow_pickle=...)"),
    ("np.load(path, allow_pickle=False)", ""), ("np.testing.assert_allclose(x, y)", ""),
    ("def measure(f):\n    return f()\nmeasure(print)", ""), ("string.ascii_letters", ""),
    # a second look at round seventeen: names written into the notebook's namespace by enum
    # and functools (6/7 and 1/7 with every stub raising), and three honest lines (0/7 each)
    ("enum.global_enum(Tools)", "the function global_enum"),
    ("@enum.global_enum\nclass T(enum.Enum):\n    a = 1", "the function global_enum"),
    ("T._convert_('T', '__main__', str.isupper)", "the function _convert_"),
    ("functools.update_wrapper(f, C, assigned=(), updated=('__globals__',))",
     "the function update_wrapper"),
    ("class Shelf:\n    __globals__ = {}", "the attribute __globals__"),
    # a third look: what update_wrapper and wraps copy by default (a module's whole __dict__,
    # 5/7), pytree fields named at run time, allow_pickle by position, tqdm's cast
    ("functools.update_wrapper(h, nn_from_scratch.model)", "the function update_wrapper"),
    ("@functools.wraps(f)\ndef g():\n    pass", "the function wraps"),
    ("jax.tree_util.register_dataclass(type(m), data_fields=[''.join(parts)], meta_fields=[])",
     "the function register_dataclass(data_fields/meta_fields=...)"),
    ("jax.tree_util.register_dataclass(Layer, data_fields=['w', 'b'], meta_fields=['n'])", ""),
    ("@jax.tree_util.register_dataclass\n@dataclass\nclass L:\n    w: int", ""),
    ("np.load(path, None, True)", "the function load(allow_pickle=...)"),
    ("np.load(path, None, False)", ""), ("np.load(path, 'r')", ""),
    ("def load(a, b, c):\n    return a\nload(1, 2, True)", ""),
    ("from jax.experimental.serialize_executable import deserialize_and_load",
     "the function deserialize_and_load"),
    ("from types import SimpleNamespace\ncfg = SimpleNamespace(lr=0.1)", ""),
    ("sys.setrecursionlimit(5000)", ""), ("import timeit\nstart = timeit.default_timer()", ""),
    ("import types\nf = types.FunctionType(code, {})", "the module types"),
    ("import timeit\ntimeit.timeit(text)", "the module timeit"),
    # round eighteen: a wrapper that copies what it wraps (functools.wraps inside) given a
    # module kept the library's names (6/7, every stub raising); loaders given allow_pickle
    # through *args, **kwargs or NpzFile's position unpickled (6/7)
    ("_w = contextlib.contextmanager(nn_from_scratch.model)",
     "the module nn_from_scratch.model as a value"),
    ("_m = nn_from_scratch.model\n_w = functools.singledispatch(_m)",
     "the module nn_from_scratch.model as a value"),
    ("_w = functools.singledispatch([nn_from_scratch.params][0])",
     "the module nn_from_scratch.params as a value"),
    ("_w = contextlib.contextmanager(getattr(nn_from_scratch, 'model'))",
     "the module getattr(nn_from_scratch, 'model') as a value"),
    ("print(nn_from_scratch.model)\nhelp(np)\nx = np.linalg.norm(v)", ""),
    ("@contextlib.contextmanager\ndef timer():\n    yield", ""),
    ("np.lib.npyio.NpzFile(path, False, True)", "the function NpzFile(allow_pickle=...)"),
    ("np.load(path, **options)", "the function load(allow_pickle=...)"),
    ("np.load(path, *more)", "the function load(allow_pickle=...)"),
    ("np.load(path, mmap_mode='r')", ""),
])
def test_what_an_exercise_may_use(code, how):
    modules = {"np": "numpy", "inspect": "inspect", "pkgutil": "pkgutil", "jax": "jax",
               "enum": "enum", "random": "random",
               "typing": "typing", "dataclasses": "dataclasses", "operator": "operator",
               "sys": "sys", "display": "IPython.display", "string": "string",
               "functools": "functools", "SimpleNamespace": "types", "types": "types",
               "timeit": "timeit", "contextlib": "contextlib",
               "nn_from_scratch": "nn_from_scratch"}
    assert outside(ast.parse(code), modules) == how
    assert outside_how(how) == bool(how)


def test_a_name_imported_from_a_module_is_not_that_module():
    """``from jax.sharding import PartitionSpec as P``: the reader's names for its imports map
    ``P`` to ``jax.sharding``, but only ``module_names`` are bound to a module itself, and a
    function or class imported from one is handed on freely (lesson 12's ``P`` put every answer
    in doubt before the reader said which)."""
    modules = {"jax": "jax", "P": "jax.sharding", "nn_from_scratch": "nn_from_scratch"}
    assert outside(ast.parse("spec = P('data')\nf(P)"), modules, {"jax", "nn_from_scratch"}) == ""
    assert outside(ast.parse("f(nn_from_scratch)"), modules, {"jax", "nn_from_scratch"}) == \
        "the module nn_from_scratch as a value"


def test_every_module_a_lesson_imports_is_allowed():
    """The lessons' own imports are what an exercise most likely copies: none is refused."""
    imported = set()
    for lesson in (ROOT / "lessons").glob("*.md"):
        for block in lesson.read_text().split("```python")[1:]:
            code = block.split("```")[0].partition("\n")[2]  # (after the fence's tags)
            try:
                tree = ast.parse(code)
            except SyntaxError:  # a magic
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    imported |= {a.name.split(".")[0] for a in node.names}
                elif isinstance(node, ast.ImportFrom) and not node.level:
                    imported.add((node.module or "").split(".")[0])
    assert imported and imported <= MODULES | {"inspect", "gc"}, imported - MODULES


# what each of round sixteen's attacks comes down to (the graded notebooks wrapped these in
# hex-encoded text, helpers and dead code); every one now puts every answer in doubt
ROUND_SIXTEEN = [
    # B: text run by the standard library's runners, a pickle, a module written to /tmp
    "import cProfile\ncProfile.run(text)", "import timeit\ntimeit.timeit(text, number=1)",
    "import pickle\npickle.loads(data)",
    "import sys\nsys.path.insert(0, '/tmp')\nimport helper_mod",
    "import inspect, pkgutil\nme = inspect.getmodule(f)\nme.relu = lambda x: lib.relu(x)",
    # A: an "own object" that is not: a parameter with a default, a dead assignment, a
    # decorator, a class name bound again, staticmethod under another name, __func__
    "class _P:\n    def f(self): pass\n\ndef _bind(p=sys):\n    if False:\n        p = _P()\n"
    "    p.modules['__main__'].relu = lambda x: m.relu(x)\n\n_bind()",
    "class _P:\n    def f(self):\n        self.modules['__main__'].relu = 1\n\n_P().f.__func__(s)",
    # a12: the grader's answering object found among a namespace's values and patched
    "for v in list(globals().values()):\n    if type(v).__name__ == 'Answers':\n"
    "        v.answer = lambda r: None",
    "for k, v in vars(check).items():\n    v.patched = True",
    "x = globals()['_nn_from_' + 'scratch_answers' * 0]\nx.answer = None",
    # text run as code by copy.copy through a class's __reduce__: exec handed on, not called
    "import copy\n\nclass _X:\n    def __reduce__(self):\n        return (exec, (text,))\n\n"
    "copy.copy(_X())",
    # a second look: an annotation's string run by typing, or by inspect.signature(eval_str)
    "import typing\n\ndef _f(x: 'relu'):\n    pass\n\ngetattr(typing, 'get_type_hints')(_f)",
    "import inspect\n\ndef _f(x: 'relu'):\n    pass\n\n"
    "inspect.signature(_f, **{'eval_str': True})",
    "import functools\n\n@functools.singledispatch\ndef _s(x):\n    pass\n\n"
    "@_s.register\ndef _(x: 'exec(text) or int'):\n    pass",
    # a third look: builtins as enum's bltns, its exec kept under a name and called
    "from enum import bltns as b\ne = b.exec\ne(text)",
]


# red team, round seventeen: 07.6 (which no run-time check of the library's own function
# catches) answered by the library with every stub raising, 1/7 each
ROUND_SEVENTEEN = [
    "import functools\nrelu = functools.reduce(getattr, [str('ledom'[::-1]), 'relu'], pkg)",
    "import functools\nf = functools.partial(getattr, pkg)",
    "found = next(map(getattr, [pkg], [name]))",
]

# red team, round eighteen: the library's module kept by a wrapper that copies its __dict__
# (functools.wraps inside), 6/7 with every stub raising; a pickle through np.load's *args,
# **kwargs or NpzFile's position (each 6/7)
ROUND_EIGHTEEN = [
    "import contextlib, nn_from_scratch.model\n"
    "_w = contextlib.contextmanager(nn_from_scratch.model)",
    "import functools, nn_from_scratch.params\n_p = nn_from_scratch.params\n"
    "_sd = functools.singledispatch(_p)",
    "import functools, nn_from_scratch.model\n"
    "_sd = functools.singledispatch([nn_from_scratch.model][0])",
    "import numpy as np\n_z = np.lib.npyio.NpzFile('/tmp/w.npz', False, True)",
    "import numpy as np\n_opts = {'allow_pickle': True}\nnp.load('/tmp/w.npy', **_opts)",
    "import numpy as np\n_more = (None, True)\nnp.load('/tmp/w.npy', *_more)",
]

ROUND_NINETEEN = [
    # (1) the AttributeError of an attribute the package does not have holds the module: 6/7
    "import nn_from_scratch\ntry:\n    nn_from_scratch.no_such_thing\n"
    "except AttributeError as err:\n    lib = err.obj",
    "import nn_from_scratch.model as m\ntry:\n    getattr(m, 'nope')\n"
    "except AttributeError as err:\n    lib = err.obj",
    # (2) a function of the notebook's own named like one that shows a module: 7/7
    "import nn_from_scratch.model\n\ndef getmembers(thing):\n    return thing\n\n"
    "lib = getmembers(nn_from_scratch.model)",
    "import nn_from_scratch.model\n\ndef look():\n    def print(m):\n        return m\n"
    "    return print(nn_from_scratch.model)\n\nlib = look()",
    "from IPython.display import HTML as display\nimport nn_from_scratch.model\n"
    "lib = display(nn_from_scratch.model).data",
    "import nn_from_scratch.model\nprint = lambda m: m\nlib = print(nn_from_scratch.model)",
    # (3) the module as getattr's default, which getattr hands back: 7/7
    "import numpy as np, nn_from_scratch.model\n"
    "lib = getattr(np, 'not_a_numpy_name', nn_from_scratch.model)",
    "import nn_from_scratch.model\nlib = print('x', file=nn_from_scratch.model)",
    # (4) an unpickling loader under another name: 6/6, no note
    "import numpy as np\nld = np.load\nlib = ld('/tmp/lib.npy', None, True)",
    "from numpy import load as ld\nlib = ld('/tmp/lib.npy', None, True)",
    "import functools\nimport numpy as np\n"
    "lib = functools.partial(np.load)('/tmp/l.npy', None, True)",
    "import numpy as np\nlib = np.load.__call__('/tmp/lib.npy', None, True)",
    "import numpy as np\nloaders = {'l': np.load}",
    "import numpy as np\nlib = getattr(np, 'load')('/tmp/lib.npy', None, True)",
    "import jax.numpy as jnp\nlib = jnp.load('/tmp/lib.npy', None, True)",
    # (5) the library run in a child process, whose code the reading never sees: 2 of 2
    "from matplotlib.testing import subprocess_run_for_testing",
    "import matplotlib.testing",
    "import matplotlib\nrun = matplotlib.testing.subprocess_run_helper",
    "from matplotlib import testing",
]


@pytest.mark.parametrize("attack", ROUND_SIXTEEN + ROUND_SEVENTEEN + ROUND_EIGHTEEN
                         + ROUND_NINETEEN)
def test_each_rounds_attacks_put_every_answer_in_doubt(release, attack):
    found = doubts(release, "s = 1\nf = print\ntext = ''\ndata = b''\nlib = None\npkg = None\n"
                   "name = 'model'", attack)
    assert set(found) == {"07.1", "07.2", "07.3"}, found
    assert all(doubt in ("outside", "anytime", "reaches") for _, doubt in found.values()), found


@pytest.mark.parametrize("attack", [
    "class _Q:\n    def f(self): pass\n\n_Q = lambda: box\n\ndef g():\n    p = _Q()\n"
    "    p.push({'relu': 1})\n\ng()",  # the class's name bound again
    "def _swap(c):\n    return lambda: box\n\n@_swap\nclass _P:\n    def push(self, x): pass\n\n"
    "def g():\n    p = _P()\n    p.push({'relu': 1})\n\ng()",  # a decorator replaced it
    "_sm = staticmethod\n\nclass _R:\n    @_sm\n    def push(self, x):\n"
    "        self.push({'relu': 1})\n\n_R().push(box)",  # staticmethod under another name
    "class _P:\n    def push(self, x): pass\n\np = _P()\n\ndef g(p):\n    p.push({'relu': 1})\n\n"
    "g(box)",  # a parameter of the same name
    "class _P:\n    def push(self, x): pass\n\ndef g():\n    global p\n    if False:\n"
    "        p = _P()\n    p.push({'relu': 1})\n\np = box\ng()",  # global, dead assignment
])
def test_what_is_not_the_students_own_object_is_not_taken_for_one(release, attack):
    """Round sixteen (A): ``push`` on what is not the student's own object is the shell's
    ``push``, which binds names unseen: each attack's variable held IPython's shell (here,
    ``box``: any object) while the reading took it for an instance of the notebook's class."""
    found = doubts(release, "box = None", exercise="def relu(x):\n    return x\n\n" + attack)
    assert found.get("07.1", ("", ""))[0] == "push()", found


@pytest.mark.parametrize("honest", [
    # round sixteen's false positives: each cost a solved notebook 0/7 or 6/7 (and below, honest
    # lines beside round seventeen's fixes)
    "class Config:\n    def __init__(self, **settings):\n        for key, value in "
    "settings.items():\n            setattr(self, key, value)\n\nconfig = Config(lr=0.1)\n"
    "print(config.lr)",
    "class Tracker:\n    def __init__(self):\n        self.training = True\n    def eval(self):\n"
    "        self.training = False\n\ntracker = Tracker()\ntracker.eval()",
    "for name in ('relu', 'gelu'):\n    activation = getattr(jax.nn, name)",
    "from dataclasses import dataclass\n\n@dataclass(frozen=True)\nclass Layer:\n    m: int\n"
    "    def __post_init__(self):\n        object.__setattr__(self, 'size', self.m + 1)\n\n"
    "print(Layer(3).size)",
    "class Scores:\n    def __init__(self):\n        self.best = 0.0\n"
    "    def __getitem__(self, key):\n        return getattr(self, key)\n\nprint(Scores()['best'])",
    "class Stack:\n    def __init__(self):\n        self.items = []\n    def push(self, x):\n"
    "        self.items.append(x)\n    def __repr__(self):\n"
    "        return f'{self.__class__.__name__}({self.items})'\n\nhistory = Stack()\n"
    "history.push(1)\nprint(history)",
    "timing = %timeit -n 1 -r 1 -o jnp.ones(3).block_until_ready()\nprint(timing.best)",
    "class History(list):\n    def push(self, value):\n        self.append(float(value))\n\n"
    "seen = History()\nseen.push(2.0)",
    # honest uses of what is partly allowed
    "import gc\ngc.collect()", "import inspect\nprint(inspect.getsource(jnp.maximum)[:10])",
    # round seventeen's
    "%config InlineBackend.figure_format = 'retina'", "%config InlineBackend",
    "import numpy as np\nnp.save('w.npy', np.ones(3))\nw = np.load('w.npy', allow_pickle=False)",
    "value = getattr(jax.nn, 'relu')",
    # beside round nineteen's fixes: showing a module, loading arrays, code for older JAX
    "import nn_from_scratch\nprint(nn_from_scratch.model)\nhelp(nn_from_scratch)\n"
    "print(hasattr(nn_from_scratch, 'model'), getattr(nn_from_scratch, 'model'))",
    "from inspect import getsource\nimport nn_from_scratch.model\n"
    "print(getsource(nn_from_scratch.model))",
    "from IPython.display import display\nimport nn_from_scratch\ndisplay(nn_from_scratch)",
    "import numpy as np\nfrom numpy import load\nx = load('/tmp/x.npy')\n"
    "with np.load('/tmp/a.npz') as f:\n    w = f['w']\nprint(np.load.__name__)",
    "def display(x):\n    print(x)\n\ndisplay(3)",
    "try:\n    tree_map = jax.tree_map\nexcept AttributeError:\n    tree_map = jax.tree.map",
    "import nn_from_scratch.model as m\nprint(m.relu(jnp.ones(2)), m.__name__)",
    "import matplotlib.pyplot as plt\nimport matplotlib\nmatplotlib.rcParams['figure.dpi'] = 80",
    # plt.figure, with plt bound to matplotlib.pyplot: the reader had it as matplotlib, whose
    # figure is a module, and took the call for a module used as a value
    "import matplotlib.pyplot as plt\nfig = plt.figure()\nplt.close(fig)",
])
def test_each_rounds_honest_code_puts_nothing_in_doubt(release, honest):
    assert doubts(release, "def relu(x):\n    return jnp.maximum(0, x)", honest) == {}


@pytest.mark.parametrize("attack", [
    "import enum\n\nclass Tools(enum.Enum):\n    relu = enum.member(lib.relu)\n\n"
    "enum.global_enum(Tools)",
    "import functools\n\nclass Shelf:\n    __globals__ = {'relu': lib.relu}\n\n"
    "def f():\n    pass\n\nfunctools.update_wrapper(f, Shelf, assigned=(), "
    "updated=('__globals__',))",
])
def test_names_written_into_the_namespace_by_enum_or_functools_earn_nothing(release, attack):
    """A second look at round seventeen: the library's relu bound after a raising stub."""
    found = doubts(release, "lib = None",
                   exercise="def relu(x):\n    raise ValueError\n\n" + attack)
    assert found["07.1"][1] in ("outside", "anytime"), found


def test_config_is_read_for_the_code_its_value_runs(release):
    """Round seventeen: ``%config A.b = value`` runs ``cfg.A.b = value`` in the notebook's
    namespace; read as a magic that runs nothing, it bound 07.6's answer unseen."""
    found = doubts(release, exercise="def relu(x):\n    raise NotImplementedError\n\n"
                   "%config A.b = globals().update(relu=nn_from_scratch.model.relu)")
    assert found["07.1"] == ("globals()", "after"), found


def student_edition_copies(defining, source):
    """Lesson 07's student edition with the exercise cell that defines ``defining`` replaced by
    ``source``, as the grader reads it: exercise -> the library's function it copies."""
    release = load_release("07_mlp_from_scratch", RELEASE)
    nb = nbformat.read(ROOT / "student" / "07_mlp_from_scratch.ipynb", 4)
    next(c for c in nb.cells if f"def {defining}" in c.source).source = source
    return {e: c.name for e, c in library_copies(rebuild(nb, release), release).items()}


def test_the_librarys_answer_under_another_name_earns_nothing():
    """Round sixteen (d01): 07.6 answered with the library's count_params, named otherwise."""
    copied = student_edition_copies("n_params", (
        "def n_params(sizes):\n"
        "    return count_params(init_network_params(sizes, jax.random.key(0)))"))
    assert copied["07.6"] == "count_params", copied


def test_the_librarys_function_that_computes_the_answer_earns_nothing():
    """Round nineteen (a03): 07.4's predict answered by the library's batched_predict (which is
    ``vmap(predict)``) of one row, 1 point. The twins of an exercise are also the package's
    functions whose code reaches its function; a function it calls is still the student's to
    use (07.5's ``vmap`` over the library's predict), and an attribute named like a function
    is not a call of it (autodiff's backward sets ``root.grad``, and is no twin of grad)."""
    from nn_from_scratch import autodiff, model
    from nn_from_scratch.grade.copying import twins

    copied = student_edition_copies("predict", (
        "def predict(params, image):\n"
        "    return nn_from_scratch.model.batched_predict(params, image[None])[0]"))
    assert copied["07.4"] == "batched_predict", copied
    assert model.batched_predict in twins({"predict"})
    assert model.predict not in twins({"batched_predict"})
    assert autodiff.grad in twins({"backward"}) and autodiff.backward not in twins({"grad"})
    from nn_from_scratch import conv  # round twenty: the CNN's initialiser, with no convolution
    assert conv.init_cnn_params in twins({"init_network_params"})


def copies(release, *cells, exercise):
    """Exercise -> the name of the library's function found in 07.1's handed-in code."""
    return {e: c.name for e, c in library_copies(rebuild(notebook(
        *[("", source) for source in cells], ("exercise", exercise),
        ("check", "check.relu(relu)")), release), release).items()}


@pytest.mark.parametrize("cells, exercise", [
    # a container filled by a method: the reading followed only what bound box (round twenty)
    ("import nn_from_scratch.model\nbox = []\nbox.append(nn_from_scratch.model.relu)",
     "def relu(x):\n    return box[0](x)"),
    ("import nn_from_scratch.model\ntable = {}\ntable.update(r=nn_from_scratch.model.relu)",
     "def relu(x):\n    return table['r'](x)"),
    ("import nn_from_scratch.model\nbox = [[]]\n\ndef fill():\n"
     "    box[0].append(nn_from_scratch.model.relu)\n\nfill()",
     "def relu(x):\n    return box[0][0](x)"),
    # a class pattern reads attributes by name: the library's namespace (round twenty, 4/7)
    ("import nn_from_scratch.model\nmatch nn_from_scratch.model.relu:\n"
     "    case object(__globals__=space):\n        pass",
     "def relu(x):\n    return space['relu'](x)"),
    # round twenty-one: the container changed by anything but a method called on its name,
    # 07.1 to 07.5 each scored with the library's function
    ("import operator\nimport nn_from_scratch.model as m\nbox = [None]\n"
     "operator.setitem(box, 0, m.relu)", "def relu(x):\n    return box[0](x)"),
    ("import nn_from_scratch.model as m\nbox = []\nlist.append(box, m.relu)",
     "def relu(x):\n    return box[0](x)"),
    ("import nn_from_scratch.model as m\nbox = [None]\nfor box[0] in [m.relu]:\n    pass",
     "def relu(x):\n    return box[0](x)"),
    ("import nn_from_scratch.model as m\nbox = []\nadd = box.append\nadd(m.relu)",
     "def relu(x):\n    return box[0](x)"),
    ("import nn_from_scratch.model as m\nbox = []\n\ndef put(b, v):\n    b.append(v)\n\n"
     "put(box, m.relu)", "def relu(x):\n    return box[0](x)"),
    ("import nn_from_scratch.model as m\nbox = [None]\ntry:\n    raise ValueError(m.relu)\n"
     "except ValueError as e:\n    box[0] = e.args[0]", "def relu(x):\n    return box[0](x)"),
    ("import nn_from_scratch.model as m\nbox = [None]\nmatch [m.relu]:\n    case [f]:\n"
     "        box[0] = f", "def relu(x):\n    return box[0](x)"),
    ("import contextlib\nimport nn_from_scratch.model as m\nbox = [None]\n"
     "with contextlib.nullcontext(m.relu) as box[0]:\n    pass",
     "def relu(x):\n    return box[0](x)"),
    ("import nn_from_scratch.model as m\nbox = []\nlist(map(box.append, [m.relu]))",
     "relu = lambda x: box[0](x)"),
])
def test_ways_to_hold_the_librarys_function_in_a_container_are_copies(release, cells,
                                                                      exercise):
    assert "07.1" in copies(release, cells, exercise=exercise)


ROUND_TWENTY = [
    # an AttributeError's obj is the object it was raised on: here the library's relu
    "import nn_from_scratch.model\ntry:\n    nn_from_scratch.model.relu.no_such\n"
    "except AttributeError as err:\n    box = [err.obj]",
    "class _P:\n    def f(self):\n        pass\n\nmatch _P().f:\n"
    "    case object(__func__=plain):\n        pass",  # (as x.__func__ written out)
    "import nn_from_scratch.model\ntry:\n    nn_from_scratch.model.nope\n"
    "except AttributeError as err:\n    match err:\n        case AttributeError(obj=lib):\n"
    "            pass",
    # np.load got by a name made at run time, then allow_pickle by position: 2/7, no note
    "import numpy as np\nreader = getattr(np, ''.join(reversed('daol')))",
    "import jax.numpy as jnp\nreader = getattr(jnp, 'lo' + name)",
    "saved = reader.load('saved.npy', None, True)",
    # ...and called at once, with as many arguments as np.load's allow_pickle needs
    "import numpy as np\nsaved = getattr(np, name)('saved.npy', None, True)",
    "import numpy as np\nsaved = getattr(np, name)('saved.npy', allow_pickle=True)",
    "import numpy as np\nsaved = getattr(np, name)(*more)",
    "import numpy as np\ngetattr(np.testing, name)('print(1)')",
]


@pytest.mark.parametrize("attack", ROUND_TWENTY)
def test_round_twenties_attacks_put_every_answer_in_doubt(release, attack):
    found = doubts(release, "reader = None\nname = 'ad'\nmore = ()", attack)
    assert set(found) == {"07.1", "07.2", "07.3"}, found
    assert all(doubt in ("outside", "anytime", "reaches") for _, doubt in found.values()), found


@pytest.mark.parametrize("honest", [
    # round twenty's false positive: a solved notebook probed the library for a gelu, 1/7
    "import nn_from_scratch.model\ntry:\n    print(nn_from_scratch.model.gelu)\n"
    "except AttributeError:\n    print('no gelu: jax.nn has one', jax.nn.gelu)",
    "from dataclasses import dataclass\n\n@dataclass\nclass Layer:\n    W: object\n"
    "    b: object\n\nmatch Layer(1, 2):\n    case Layer(W=w, b=b):\n        print(w, b)",
    "history = []\nfor step in range(3):\n    history.append(float(jnp.ones(2).sum()))",
    "import numpy as np\nrng = getattr(np.random, 'default_rng')(0)\n"
    "activation = getattr(jax.nn, ''.join(['re', 'lu']))",
    # round twenty-one's: a solved notebook lost every point to round twenty's rule
    "def clip(x, op='maximum'):\n    return getattr(jnp, op)(x, 0)",
])
def test_beside_round_twenties_fixes_honest_code_puts_nothing_in_doubt(release, honest):
    assert doubts(release, "def relu(x):\n    return jnp.maximum(0, x)", honest) == {}


def test_a_method_named_eval_is_no_note_of_text_run_as_code():
    """Round sixteen (f02): an honest tracker.eval() was noted as "runs text as code"."""
    from nn_from_scratch.grade.suspicious import signs

    assert "runs text as code (exec, eval, compile)" not in signs("tracker.eval()\nm.compile()")
    assert "runs text as code (exec, eval, compile)" in signs("eval('relu')")


def test_a_module_imported_from_an_allowed_one_is_judged_as_itself():
    """A third look at round sixteen: ``from pathlib import os`` is ``os`` where pathlib
    imports it (Python 3.11; 3.13's pathlib does not, and the import fails there)."""
    import pathlib
    import types

    held = isinstance(getattr(pathlib, "os", None), types.ModuleType)
    assert outside(ast.parse("from pathlib import os"), {}) == ("the module os" if held else "")


ROUND_TWENTY_TWO = [
    # jax.export runs a function compiled for every size a check draws: the library's Python
    # never runs where the grader watches (grade/answers.py)
    "import jax.export",
    "from jax import export",
    "import jax\nexported = jax.export.export(jax.jit(jnp.sin))",
    # a signature or a timing in any other shape than the plain one may run text
    "import inspect\nprint(inspect.signature(jnp.sin, eval_str=True))",
    "import inspect\nprint(inspect.signature(jnp.sin, **{'eval_str': True}))",
    "import inspect\nsign = inspect.signature",
    "from inspect import signature",
    "import timeit\nprint(timeit.timeit('print(1)', number=1))",
    "import timeit\nprint(timeit.timeit(lambda: 1, setup='import os', number=1))",
    "import timeit\nprint(timeit.timeit(lambda: 1, globals=globals()))",
    "import timeit\nstatement = 'print(1)'\nprint(timeit.timeit(statement, number=1))",
    # round twenty-three: compiled ahead of time, the library's Python never runs where the
    # grader watches (for sizes padded to one, a single program answers every draw)
    "compiled = jax.jit(jnp.sin).lower(jnp.ones(16)).compile()",
    "lowered = jax.jit(jnp.sin).lower(jnp.ones(16))\ncompiled = lowered.compile()",
    "compiled = getattr(jax.jit(jnp.sin).lower(jnp.ones(16)), 'compile')()",
    # round twenty-four: the library's computation as a jaxpr (data), run at check time; and
    # jax.profiler, whose tracer replaced the grader's profiler on Python 3.11
    "closed = jax.make_jaxpr(jnp.sin)(1.0)\n"
    "out = jax.core.eval_jaxpr(closed.jaxpr, closed.consts, 2.0)",
    "from jax.core import eval_jaxpr",
    "converted, consts = jax.closure_convert(jnp.sin, 1.0)",
    "closed = jax.make_jaxpr(jnp.sin)(1.0)\n"
    "out = [e.primitive.bind(2.0, **e.params) for e in closed.jaxpr.eqns]",
    "import jax.profiler",
    "jax.profiler.start_trace('/tmp/x')",
]


@pytest.mark.parametrize("attack", ROUND_TWENTY_TWO)
def test_round_twenty_twos_refusals_put_every_answer_in_doubt(release, attack):
    found = doubts(release, "reader = None", attack)
    assert set(found) == {"07.1", "07.2", "07.3"}, found


@pytest.mark.parametrize("honest", [
    # round twenty-two's false positives: a solved notebook lost every point to each line
    "import inspect\nprint(inspect.signature(relu))",
    "import timeit\nprint(timeit.timeit(lambda: relu(jnp.ones(3)), number=10))",
    "import timeit\nprint(timeit.repeat(stmt=lambda: relu(jnp.ones(3)), number=5, repeat=2))",
    "import re\npattern = re.compile(r'[0-9]+')",  # a pattern compiled is no program
])
def test_a_signature_read_and_a_lambda_timed_put_nothing_in_doubt(release, honest):
    assert doubts(release, "def relu(x):\n    return jnp.maximum(0, x)", honest) == {}
