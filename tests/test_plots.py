import matplotlib
import numpy as np

from nn_from_scratch import plots


def test_plots_save_png_files(tmp_path, digits):
    history = {"train_loss": [1.0, 0.5], "test_loss": [1.1, 0.6],
               "train_accuracy": [0.5, 0.8], "test_accuracy": [0.4, 0.7]}
    xs = np.linspace(-1, 1, 5)
    figures = {
        "history": plots.plot_history(history, path=tmp_path / "history.png"),
        "grid": plots.image_grid(digits.x_train[:10], digits.y_train[:10], image_shape=(8, 8),
                                 ncols=5, title="digits", path=tmp_path / "grid.png"),
        "bars": plots.timing_bars({"eager": 2.0, "jit": 0.1}, path=tmp_path / "bars.png"),
        "contour": plots.contour(xs, xs, np.add.outer(xs ** 2, xs), path=tmp_path / "c.png"),
    }
    for name, fig in figures.items():
        assert isinstance(fig, matplotlib.figure.Figure)
    for file in ("history.png", "grid.png", "bars.png", "c.png"):
        assert (tmp_path / file).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(figures["grid"].axes) == 10  # 2 rows x 5 columns
