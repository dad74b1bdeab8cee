"""nn_from_scratch: a neural network built from jax.numpy, jax.random, grad, jit and vmap.

The names follow the JAX MNIST tutorial so that its readers recognise every piece:
``init_network_params``, ``predict``, ``batched_predict``, ``one_hot``, ``loss``,
``accuracy`` and ``update``. ``fit`` runs whole training loops and ``load_dataset``
brings real handwritten digits, offline if need be.
"""
from ._checks import InputError, check_key
from .data import Dataset, DataUnavailableError, load_dataset
from .epoch import batch_indices, evaluate, train_epoch, update
from .losses import accuracy, loss, one_hot
from .model import batched_predict, predict, relu
from .params import Params, count_params, init_network_params, random_layer_params
from .train import DivergedError, History, fit

__version__ = "0.2.0"

__all__ = [
    "DataUnavailableError", "Dataset", "DivergedError", "History", "InputError", "Params",
    "accuracy", "batch_indices", "batched_predict", "check_key", "count_params", "evaluate",
    "fit", "init_network_params", "load_dataset", "loss", "one_hot", "predict",
    "random_layer_params", "relu", "train_epoch", "update",
]
