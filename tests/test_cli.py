import os
import re
import subprocess
import sys

import pytest

from nn_from_scratch.__main__ import main


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "nn_from_scratch", *args], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "NN_FROM_SCRATCH_OFFLINE": "1"})


def test_train_end_to_end(tmp_path):
    plot = tmp_path / "curves.png"
    result = run_cli("train", "--epochs", "3", "--plot", str(plot))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Dataset: digits (MNIST is not prepared locally" in out
    assert "layers [64, 512, 512, 10], 301,066 parameters" in out
    assert len(re.findall(r"^epoch +\d+ .* test acc 0\.\d{4}$", out, re.M)) == 3
    accuracy = float(re.search(r"Done: test accuracy (0\.\d+)", out).group(1))
    assert accuracy > 0.5
    assert plot.read_bytes()[:4] == b"\x89PNG"


def test_no_jit_and_layers(capsys):
    assert main(["train", "--dataset", "digits", "--epochs", "1", "--no-jit",
                 "--layers", "64,16,10", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "layers [64, 16, 10]" in out and "eager mode" in out and "Done: test accuracy" in out


@pytest.mark.parametrize("args, message", [
    (["--layers", "784,512,10"], "Layer sizes [784, 512, 10] do not match the digits data"),
    (["--step-size", "0"], "step_size must be a finite number greater than 0; got 0.0"),
    (["--step-size", "1e6", "--epochs", "2"], "The loss became"),
])
def test_bad_input_is_one_clear_line(capsys, args, message):
    assert main(["train", "--dataset", "digits", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and "Traceback" not in err


def test_bad_layers_and_dataset_are_refused_by_the_parser(capsys):
    for args in (["--layers", "64;10"], ["--dataset", "cifar"]):
        with pytest.raises(SystemExit) as exit_info:
            main(["train", *args])
        assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "--layers takes at least two positive whole numbers" in err
    assert re.search(r"invalid choice: 'cifar' \(choose from '?auto'?, '?mnist'?, '?digits'?\)", err)


def test_help_lists_every_option():
    result = run_cli("train", "--help")
    for option in ("--dataset", "--epochs", "--batch-size", "--step-size", "--layers",
                   "--no-jit", "--seed", "--plot", "--init"):
        assert option in result.stdout
