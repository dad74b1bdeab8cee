"""``python -m nn_from_scratch train --model gpt``: the tiny GPT on Python's documentation.

It prints the text and its split, the model, the n-gram baselines on the validation split
(unigram, bigram and the best add-alpha n; the best n-gram with back-off, in bits per
character), one line per epoch, the result against both, and a sample;
``--generate N --temperature T --top-k K`` chooses the sample's length and how it is drawn.
"""
import argparse
import time

from ._checks import InputError, check_positive_int
from .i18n import _

# The defaults, chosen to fit the whole command in 3 minutes on a 2-core laptop (README), spend
# the time on a model narrower than nanoGPT's CPU shape (width 128) that sees more text: width
# 128 ended at 1.97-2.00 bits/char after 1,200 steps of 16 windows; width 96 costs about 0.8
# of that a step. 2,500 steps of it (seed 0: 1.731 bits/char) beat the back-off 8-gram's 1.797;
# 2,000 did not (1.782); 0.006 instead of 0.004, 1.734; width 64 with 32 windows, 1.746 (README).
GPT = {"context": 64, "width": 96, "heads": 4, "depth": 4}
EPOCHS, STEPS_PER_EPOCH, BATCH_SIZE = 10, 250, 16
LEARNING_RATE, B2, WEIGHT_DECAY = 4e-3, 0.99, 0.1  # b2 0.99 as nanoGPT's for few tokens a step
WARMUP_STEPS = 60  # the rate rises over these, then falls along a cosine to a tenth
SAMPLE, TEMPERATURE, PROMPT = 300, 0.8, "The "
NGRAM_ORDERS = range(1, 7)  # the n-grams tried; the best is reported with the unigram, bigram
BACKOFF_ORDERS = range(1, 9)  # the back-off n-grams tried (each n keeps helping; 9: int64 codes)
# The image models' options, refused with --model gpt rather than silently ignored.
IMAGE_ONLY = {"dataset": "auto", "layers": None, "init": "he", "augment": None,
              "schedule": None, "mode": "scan", "optimizer": None, "warmup": None,
              "plot": None}


def add_arguments(train: argparse.ArgumentParser) -> None:
    """The options only the GPT uses, added to ``train``'s parser."""
    train.add_argument("--generate", type=int, default=SAMPLE, metavar="N",
                       help="--model gpt: characters to write after training")
    train.add_argument("--temperature", type=float, default=TEMPERATURE,
                       help="--model gpt: the sample's temperature (below 1: more careful)")
    train.add_argument("--top-k", type=int, default=None, metavar="K",
                       help="--model gpt: sample only from the K likeliest characters")
    train.add_argument("--prompt", default=PROMPT, help="--model gpt: the sample's start")


def _given(args: argparse.Namespace, defaults: dict) -> str:
    """The options of ``defaults`` that ``args`` sets otherwise, as flags: ``"--top-k, ..."``."""
    return ", ".join("--" + name.replace("_", "-") for name, default in defaults.items()
                     if getattr(args, name) != default)


def refuse_gpt_options(args: argparse.Namespace) -> None:
    """For the image models: the sampling options given are an error, not silently ignored."""
    flags = _given(args, {"generate": SAMPLE, "temperature": TEMPERATURE, "top_k": None,
                          "prompt": PROMPT})
    if flags:
        raise InputError(f"{flags}: the GPT's sampling option(s); add --model gpt, or leave "
                         f"them out for the {args.model}.")


def _check(args: argparse.Namespace) -> None:
    flags = _given(args, IMAGE_ONLY)
    if flags:
        raise InputError(f"{flags}: the image models' option(s); the GPT reads Python's "
                         f"documentation with AdamW in one compiled program per epoch. Leave "
                         f"them out with --model gpt.")
    check_positive_int(args.generate, "--generate", minimum=0)
    if not args.temperature > 0:
        raise InputError(f"--temperature must be above 0; got {args.temperature}. Use 1 for "
                         f"the model as it is, 0.5 for more careful text, or --top-k 1 for "
                         f"the likeliest character every time.")
    if args.top_k is not None:
        check_positive_int(args.top_k, "--top-k")
    if not args.prompt:
        raise InputError("--prompt must hold at least one character, e.g. --prompt 'The '.")


def gpt_command(args: argparse.Namespace) -> int:
    """Train the GPT as ``args`` say and print what it learned; 0 on success."""
    _check(args)
    import jax

    from .generate import generate
    from .gpt import bits_per_char, init_gpt_params
    from .gpt_train import fit_gpt
    from .ngram import best_backoff, best_ngram
    from .optim import adamw, warmup_cosine_schedule
    from .params import count_params
    from .text_data import load_text

    start = time.perf_counter()
    data = load_text()
    epochs = EPOCHS if args.epochs is None else check_positive_int(args.epochs, "--epochs")
    batch = BATCH_SIZE if args.batch_size is None else check_positive_int(args.batch_size,
                                                                          "--batch-size")
    rate = LEARNING_RATE if args.step_size is None else args.step_size
    decay = WEIGHT_DECAY if args.weight_decay is None else args.weight_decay
    if args.top_k is not None and args.top_k > data.tokenizer.vocab_size:
        raise InputError(f"--top-k {args.top_k} is more than the {data.tokenizer.vocab_size} "
                         f"tokens; use at most {data.tokenizer.vocab_size}.")
    init_key, train_key, sample_key = jax.random.split(jax.random.key(args.seed), 3)
    params = init_gpt_params(init_key, data.tokenizer.vocab_size, **GPT)
    steps = epochs * STEPS_PER_EPOCH
    schedule = warmup_cosine_schedule(rate, min(WARMUP_STEPS, steps // 2), steps,
                                      end_value=rate / 10)
    print(data, flush=True)
    print(_("Model: a GPT of {depth} causal blocks of {heads} heads, width {width}, context "
            "{context} characters, {count:,} parameters; on {device}.").format(
                **GPT, count=count_params(params), device=jax.devices()[0].platform.upper()))
    print(_("Training: {epochs} epochs of {steps} steps, batches of {batch} windows, AdamW at "
            "{rate:g} (warmed up over {warmup} steps, then a cosine to a tenth), b2 {b2:g}, "
            "weight decay {decay:g}.").format(
                epochs=epochs, steps=STEPS_PER_EPOCH, batch=batch, rate=rate,
                warmup=min(WARMUP_STEPS, steps // 2), b2=B2, decay=decay))
    baselines = best_ngram(data.train_ids, data.val_ids, data.tokenizer.vocab_size,
                           NGRAM_ORDERS)
    best = min(baselines, key=lambda n: baselines[n][0])
    print(_("Baselines on the validation split, counted on the training split: unigram "
            "{uni:.3f} bits/char, bigram {bi:.3f}, best n-gram the {n}-gram {best:.3f} "
            "(add-{alpha:g} smoothing; n = 1..{top} tried).").format(
                uni=baselines[1][0], bi=baselines[2][0], n=best, best=baselines[best][0],
                alpha=baselines[best][1], top=NGRAM_ORDERS[-1]), flush=True)
    backoff = best_backoff(data.train_ids, data.val_ids, data.tokenizer.vocab_size,
                           BACKOFF_ORDERS)
    best_b = min(backoff, key=lambda n: backoff[n][0])
    print(_("With back-off to shorter contexts (k = {k:g} pseudo-counts): the {n}-gram "
            "{bits:.3f} bits/char (n = 1..{top} tried).").format(
                k=backoff[best_b][1], n=best_b, bits=backoff[best_b][0],
                top=BACKOFF_ORDERS[-1]), flush=True)
    params, history = fit_gpt(params, data, optimizer=adamw(schedule, b2=B2, weight_decay=decay),
                              key=train_key, epochs=epochs, steps_per_epoch=STEPS_PER_EPOCH,
                              batch_size=batch, verbose=True)
    bits = float(bits_per_char(history.val_loss[-1]))
    training = sum(history.epoch_time)
    print(_("Done: validation {bits:.3f} bits/char ({nats:.4f} nats), the best add-alpha "
            "n-gram {ngram:.3f} ({ratio:.2f}x its bits), with back-off {backoff:.3f} "
            "({ratio_b:.2f}x); training {training:.1f} s, compile {compile:.1f} s, whole "
            "command so far {total:.1f} s.").format(
                bits=bits, nats=history.val_loss[-1], ngram=baselines[best][0],
                ratio=bits / baselines[best][0], backoff=backoff[best_b][0],
                ratio_b=bits / backoff[best_b][0], training=training,
                compile=history.compile_time, total=time.perf_counter() - start))
    if args.generate:
        top = "" if args.top_k is None else _(", top-k {k}").format(k=args.top_k)
        print(_("Sample ({n} characters at temperature {t:g}{top}, after {prompt!r}):").format(
            n=args.generate, t=args.temperature, top=top, prompt=args.prompt))
        ids = generate(params, sample_key, data.tokenizer.encode(args.prompt), args.generate,
                       args.temperature, args.top_k)
        print(data.tokenizer.decode(ids), flush=True)
    return 0
