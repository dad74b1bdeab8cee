"""nn_from_scratch: a neural network built from jax.numpy, jax.random, grad, jit and vmap.

The names follow the JAX MNIST tutorial so that its readers recognise every piece.
"""
from .data import Dataset, batch_indices, load_dataset
from .losses import accuracy, loss, one_hot
from .model import batched_predict, predict, relu
from .params import check_key, count_params, init_network_params, random_layer_params
from .train import DivergedError, evaluate, fit, sgd_step, update

__version__ = "0.1.0"

__all__ = [
    "Dataset", "DivergedError", "accuracy", "batch_indices", "batched_predict", "check_key",
    "count_params", "evaluate", "fit", "init_network_params", "load_dataset", "loss",
    "one_hot", "predict", "random_layer_params", "relu", "sgd_step", "update",
]
