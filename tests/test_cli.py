import os
import re
import subprocess
import sys
import time

import pytest

from nn_from_scratch import DataUnavailableError
from nn_from_scratch import train_cli as cli
from nn_from_scratch.__main__ import main


def run_cli(*args, **env):
    return subprocess.run([sys.executable, "-m", "nn_from_scratch", *args], capture_output=True,
                          text=True, timeout=300,
                          env={**os.environ, "NN_FROM_SCRATCH_OFFLINE": "1", **env})


def test_train_end_to_end_on_real_mnist_images(tmp_path):
    plot = tmp_path / "curves.png"
    result = run_cli("train", "--epochs", "3", "--plot", str(plot))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Dataset: mnist-5k (MNIST is not prepared locally" in out
    assert "layers [784, 512, 512, 10], 669,706 parameters" in out and "scan mode" in out
    assert len(re.findall(r"^epoch +\d+ .* val acc 0\.\d{4}$", out, re.M)) == 3
    found = re.search(r"Done: validation accuracy (0\.\d+), test accuracy (0\.\d+) \(the test "
                      r"split, evaluated once now\)", out)
    assert found and float(found.group(1)) > 0.8 and float(found.group(2)) > 0.8
    assert plot.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("flag", [["--no-jit"], ["--mode", "eager"]])
def test_eager_mode_and_layers(capsys, flag):
    assert main(["train", "--dataset", "digits", "--epochs", "1", *flag,
                 "--layers", "64,16,10", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "layers [64, 16, 10]" in out and "eager mode" in out and "Done: validation" in out


def accuracy_after(out, epochs):
    """The test accuracy of ``train``'s last line, once the line of epoch ``epochs`` is printed."""
    assert len(re.findall(rf"^epoch +{epochs} .* val acc 0\.\d{{4}}$", out, re.M)) == 1
    found = re.search(r"Done: validation accuracy (0\.\d+), test accuracy (0\.\d+)", out)
    assert found
    return float(found.group(2))


def test_the_cnn_trains_with_the_same_loop_and_the_same_lines(capsys):
    assert main(["train", "--model", "cnn", "--dataset", "mnist-5k", "--epochs", "1"]) == 0
    out = capsys.readouterr().out
    assert ("Model: CNN: 16 3x3 filters, 32 3x3 filters (each conv -> relu -> 2x2 max-pool), "
            "dense 800 -> 128 -> 10, 108,618 parameters, He init; scan mode") in out
    assert ("Training: 1 epochs, batches of 32, step size 0.1 falling to 0 along a cosine, "
            "images shifted by up to 2 pixels.") in out
    assert accuracy_after(out, epochs=1) > 0.5  # one epoch, far above chance (0.1)


def test_the_transformer_trains_with_the_same_loop_and_the_same_lines(capsys):
    assert main(["train", "--model", "transformer", "--dataset", "digits", "--epochs", "4",
                 "--step-size", "0.1", "--optimizer", "sgd"]) == 0
    out = capsys.readouterr().out
    assert ("Model: transformer: 16 patches of 2x2, width 64, 2 blocks of 4 heads and an MLP "
            "of 128, mean over the patches,") in out
    assert accuracy_after(out, epochs=4) > 0.2  # four epochs of 8x8 digits: above chance


def test_the_mlp_takes_the_cnns_schedule_and_shifts_when_asked(capsys):
    assert main(["train", "--dataset", "digits", "--epochs", "2", "--schedule", "cosine",
                 "--augment", "shift", "--optimizer", "sgd"]) == 0
    out = capsys.readouterr().out
    assert ("Training: 2 epochs, batches of 128, step size 0.2 falling to 0 along a cosine, "
            "images shifted by up to 2 pixels.") in out


def test_train_with_adam_and_with_adamw_after_a_warm_up(capsys):
    assert main(["train", "--dataset", "digits", "--epochs", "2", "--optimizer", "adam"]) == 0
    out = capsys.readouterr().out
    assert "Training: 2 epochs, batches of 128, adam at step size 0.001." in out
    assert accuracy_after(out, epochs=2) > 0.8
    assert main(["train", "--dataset", "digits", "--epochs", "3", "--optimizer", "adamw",
                 "--step-size", "0.002", "--warmup", "1", "--weight-decay", "0.01",
                 "--schedule", "cosine", "--mode", "jit"]) == 0
    out = capsys.readouterr().out
    assert ("Training: 3 epochs, batches of 128, adamw at step size 0.002, weight decay 0.01, "
            "warmed up over 1 epoch falling to 0 along a cosine.") in out
    assert accuracy_after(out, epochs=3) > 0.8


def test_the_default_warm_up_is_the_same_share_of_fewer_epochs(capsys, monkeypatch):
    def no_training(*args, **kwargs):
        raise SystemExit(0)
    monkeypatch.setattr("nn_from_scratch.train.fit", no_training)
    for epochs, warm in (("12", ", warmed up over 1 epoch falling"), ("4", " falling")):
        with pytest.raises(SystemExit):
            main(["train", "--model", "transformer", "--dataset", "digits", "--epochs", epochs])
        assert (f"Training: {epochs} epochs, batches of 32, adamw at step size 0.002, weight "
                f"decay 0.1{warm} to 0 along a cosine") in capsys.readouterr().out


def test_the_optimizers_rate_warms_up_step_by_step_then_follows_the_schedule():
    import jax.numpy as jnp

    def rates(optimizer, steps):  # the rate at each step: the update of a gradient of 1
        grads = [jnp.ones(1)]
        state = optimizer.init(grads)
        return [-float(optimizer.update(grads, state._replace(count=jnp.int32(k)))[0][0][0])
                for k in steps]

    # 2 warm-up epochs of the 5, 10 steps an epoch
    constant = cli.make_optimizer("sgd", 0.5, "constant", 2, 0.0, 5, 10)
    assert rates(constant, (0, 10, 20, 49)) == pytest.approx([0.0, 0.25, 0.5, 0.5])
    cosine = cli.make_optimizer("sgd", 0.5, "cosine", 2, 0.0, 5, 10)
    assert rates(cosine, (10, 20, 35, 50)) == pytest.approx([0.25, 0.5, 0.25, 0.0], abs=1e-6)
    assert cli.make_optimizer("sgd", 0.5, "cosine", 0, 0.0, 5, 10) is None  # fit's plain SGD


@pytest.mark.parametrize("args, message", [
    (["--optimizer", "adam", "--weight-decay", "0.1"], "--weight-decay is adamw's"),
    (["--optimizer", "adam", "--warmup", "3", "--epochs", "3"],
     "--warmup 3 must be fewer epochs than --epochs 3"),
    (["--optimizer", "adamw", "--step-size", "-1"],
     "learning_rate must be a finite number greater than 0; got -1.0"),
    (["--optimizer", "sgd", "--warmup", "-1"], "--warmup must be a whole number >= 0; got -1"),
    (["--model", "cnn"], "(8, 8) is too small for 2 3x3 convolutions"),
    (["--model", "cnn", "--layers", "64,10"], "--layers and --init are the MLP's options"),
    (["--model", "transformer", "--init", "normal"], "the transformer has its own layers"),
    (["--layers", "784,512,10"], "Layer sizes [784, 512, 10] do not match the digits data"),
    (["--optimizer", "sgd", "--step-size", "0"],
     "step_size must be a finite number greater than 0; got 0.0"),
    (["--optimizer", "sgd", "--step-size", "1e6", "--epochs", "2"], "The loss became"),
    (["--epochs", "0"], "epochs must be a whole number >= 1; got 0"),
    (["--optimizer", "sgd", "--schedule", "cosine", "--step-size", "-1"],
     "step_size must be a finite number greater"),
    (["--step-size", "0"], "learning_rate must be a finite number greater than 0; got 0.0"),
])
def test_bad_input_is_one_clear_line(capsys, args, message):
    assert main(["train", "--dataset", "digits", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and "Traceback" not in err
    assert err.count("\n") == 1


@pytest.mark.parametrize("path, message", [
    ("/no/such/dir/x.png", "the folder /no/such/dir does not exist"),
    ("curves.xyz", "matplotlib cannot write .xyz files"),
])
def test_a_bad_plot_path_is_refused_before_any_training(capsys, monkeypatch, path, message):
    def no_training(*args, **kwargs):
        raise AssertionError("training started although the plot could never be saved")
    monkeypatch.setattr("nn_from_scratch.train.fit", no_training)
    assert main(["train", "--dataset", "digits", "--plot", path]) == 2
    assert message in capsys.readouterr().err


def test_a_plot_that_fails_after_training_keeps_the_results(capsys, monkeypatch, tmp_path):
    def disk_full(history, path):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr("nn_from_scratch.plots.plot_history", disk_full)
    code = main(["train", "--dataset", "digits", "--epochs", "1", "--plot",
                 str(tmp_path / "c.png")])
    captured = capsys.readouterr()
    assert code == 1
    assert "Done: validation accuracy" in captured.out  # the summary survived
    assert captured.err.strip().splitlines() == [
        f"error: could not save the curves to {tmp_path / 'c.png'} (No space left on device); "
        f"the results above are complete."]


def test_explicit_mnist_offline_is_one_line_within_seconds():
    start = time.perf_counter()
    result = run_cli("train", "--dataset", "mnist", "--epochs", "1")
    assert time.perf_counter() - start < 30  # start-up included; never tfds's minutes of retries
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: MNIST is not prepared locally")
    assert "--dataset mnist-5k" in lines[0]


def test_a_real_bug_keeps_its_traceback(monkeypatch):
    def bug(*args, **kwargs):
        raise ValueError("an internal bug, not a user's mistake")
    monkeypatch.setattr("nn_from_scratch.data.load_dataset", bug)
    with pytest.raises(ValueError, match="internal bug"):
        main(["train", "--dataset", "digits"])
    assert issubclass(DataUnavailableError, cli.InputError)


def test_bad_layers_and_dataset_are_refused_by_the_parser(capsys):
    for args in (["--layers", "64;10"], ["--dataset", "cifar"], ["--mode", "fast"]):
        with pytest.raises(SystemExit) as exit_info:
            main(["train", *args])
        assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "--layers takes at least two positive whole numbers" in err
    assert re.search(r"invalid choice: 'cifar' \(choose from '?auto'?, '?mnist'?, '?mnist-5k'?, "
                     r"'?digits'?\)", err)


def test_help_lists_every_command_and_option():
    result = run_cli("train", "--help")
    for option in ("--model", "--dataset", "--epochs", "--batch-size", "--step-size", "--layers",
                   "--mode", "--no-jit", "--seed", "--plot", "--init", "--schedule",
                   "--augment", "--optimizer", "--warmup", "--weight-decay", "--generate",
                   "--temperature", "--top-k", "--prompt"):
        assert option in result.stdout
    top = run_cli("--help").stdout
    assert all(command in top for command in ("train", "grade", "progress", "doctor"))
    assert "train an MLP, a CNN or a transformer" in top  # every model train can build


@pytest.fixture
def small_gpt(monkeypatch):
    """train --model gpt at a test's size: a GPT of one narrow block, a few steps an epoch."""
    from nn_from_scratch import gpt_cli
    monkeypatch.setattr(gpt_cli, "GPT", {"context": 16, "width": 16, "heads": 2, "depth": 1})
    monkeypatch.setattr(gpt_cli, "STEPS_PER_EPOCH", 4)
    monkeypatch.setattr(gpt_cli, "NGRAM_ORDERS", range(1, 4))
    monkeypatch.setattr(gpt_cli, "BACKOFF_ORDERS", range(1, 5))


def test_the_gpt_prints_its_text_baselines_epochs_and_a_sample(capsys, small_gpt):
    assert main(["train", "--model", "gpt", "--epochs", "2", "--generate", "40",
                 "--temperature", "0.5", "--top-k", "5", "--prompt", "def "]) == 0
    out = capsys.readouterr().out
    assert "Text python_docs: the help topics of Python 3." in out
    assert "characters for training" in out and "(the last 10%)" in out
    assert re.search(r"unigram 4\.\d{3} bits/char, bigram 3\.\d{3}, best n-gram the 3-gram "
                     r"2\.\d{3} \(add-0\.1 smoothing; n = 1\.\.3 tried\)", out)
    assert re.search(r"With back-off to shorter contexts \(k = \d+ pseudo-counts\): the 4-gram "
                     r"2\.0\d{2} bits/char \(n = 1\.\.4 tried\)", out)
    assert len(re.findall(r"^epoch +\d .* bits/char, next-character accuracy 0\.\d{3}$", out,
                          re.M)) == 2
    assert re.search(r"Done: validation .*, the best add-alpha n-gram 2\.\d{3} \(\d\.\d\dx its "
                     r"bits\), with back-off 2\.0\d{2} \(\d\.\d\dx\);", out)
    sample = out.split("Sample (40 characters at temperature 0.5, top-k 5, after 'def '):\n")[1]
    assert sample.startswith("def ") and len(sample.rstrip("\n")) >= 44


@pytest.mark.parametrize("args, message", [
    (["--model", "gpt", "--dataset", "digits"], "--dataset: the image models' option"),
    (["--model", "gpt", "--temperature", "0"], "--temperature must be above 0"),
    (["--model", "gpt", "--top-k", "0"], "--top-k must be a whole number >= 1"),
    (["--model", "gpt", "--top-k", "500"], "--top-k 500 is more than the"),
    (["--model", "gpt", "--generate", "-1"], "--generate must be a whole number >= 0"),
    (["--model", "mlp", "--generate", "10"], "--generate: the GPT's sampling option"),
])
def test_bad_gpt_input_is_one_clear_line(capsys, small_gpt, args, message):
    assert main(["train", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and err.count("\n") == 1
