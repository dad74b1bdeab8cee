import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest

from nn_from_scratch import History, i18n, plots


@pytest.fixture
def history():
    return History("scan", 32, 10, 0.1, epoch_time=(0.2, 0.2), train_loss=(1.0, 0.5),
                   train_accuracy=(0.5, 0.8), val_loss=(1.1, 0.6), val_accuracy=(0.4, 0.7))


def test_plots_save_png_files_and_close_them(tmp_path, digits, history):
    plt.close("all")
    xs = np.linspace(-1, 1, 5)
    figures = {
        "history": plots.plot_history(history, path=tmp_path / "history.png"),
        "compare": plots.plot_history({"sgd": history, "adam": history}, path=tmp_path / "cmp.png"),
        "grid": plots.image_grid(digits.x_train[:10], digits.y_train[:10], image_shape=(8, 8),
                                 ncols=5, title="digits", path=tmp_path / "grid.png"),
        "bars": plots.timing_bars({"eager": 2.0, "jit": 0.1}, path=tmp_path / "bars.png"),
        "contour": plots.contour(xs, xs, np.add.outer(xs ** 2, xs), path=tmp_path / "c.png"),
    }
    for fig in figures.values():
        assert isinstance(fig, matplotlib.figure.Figure)
    for file in ("history.png", "cmp.png", "grid.png", "bars.png", "c.png"):
        assert (tmp_path / file).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(figures["grid"].axes) == 10  # 2 rows x 5 columns
    assert plt.get_fignums() == []  # saved figures are closed: a loop cannot pile them up


def test_figures_without_a_path_stay_open_for_the_notebook(history):
    plt.close("all")
    fig = plots.plot_history(history)
    assert plt.get_fignums() == [fig.number]
    assert [line.get_label() for line in fig.axes[0].lines] == ["train", "val"]
    plt.close("all")


def test_timing_bars_switch_to_a_log_axis_across_orders_of_magnitude():
    assert plots.timing_bars({"a": 1.0, "b": 2.0}).axes[0].get_xscale() == "linear"
    wide = plots.timing_bars({"no jit": 5.0, "jit": 0.01})
    assert wide.axes[0].get_xscale() == "log" and "log scale" in wide.axes[0].get_xlabel()
    assert plots.timing_bars({"a": 5.0, "b": 0.01}, log=False).axes[0].get_xscale() == "linear"
    plt.close("all")


def test_signed_grids_share_one_colour_scale_centred_on_zero():
    plt.close("all")
    kernels = np.stack([np.full((3, 3), 0.5), -2.0 * np.eye(3)])
    fig = plots.image_grid(kernels, ncols=2, signed=True)
    shown = [ax.images[0] for ax in fig.axes if ax.images]
    assert [image.get_clim() for image in shown] == [(-2.0, 2.0)] * 2  # one scale, symmetric
    assert shown[0].get_cmap().name == "RdBu_r" and len(fig.axes) == 3  # and a colour bar
    plt.close("all")


def test_the_window_diagram_outlines_the_same_step_in_the_image_output_and_patches():
    from matplotlib.patches import Rectangle

    plt.close("all")
    image = np.arange(30.0).reshape(5, 6)
    kernel = np.ones((2, 3))
    output = np.array([[image[i:i + 2, j:j + 3].sum() for j in range(4)] for i in range(4)])
    patches = np.array([image[i:i + 2, j:j + 3].ravel() for i in range(4) for j in range(4)])
    fig = plots.window_diagram(image, kernel, output, patches, at=(1, 2))
    boxes = {ax.get_title(): [(p.get_xy(), p.get_width(), p.get_height()) for p in ax.patches
                              if isinstance(p, Rectangle)] for ax in fig.axes}
    assert boxes["image (5, 6): the window at (1, 2)"] == [((1.5, 0.5), 3, 2)]
    assert boxes["output (4, 4): pixel (1, 2)"] == [((1.5, 0.5), 1, 1)]
    assert boxes["patches (16, 6): row 6"] == [((-0.5, 5.5), 6, 1)]  # row 1 * 4 + 2
    assert boxes["kernel (2, 3)"] == []
    plt.close("all")


def test_long_captions_fit_over_their_images_without_overlapping():
    """Lesson 10's photo names once ran into each other; in Chinese too (wide characters)."""
    for names in (["temple (scikit-learn)", "flower (scikit-learn)", "Grace Hopper (matplotlib)"],
                  ["寺庙（scikit-learn）", "花（scikit-learn）", "格蕾丝·霍珀（matplotlib）"]):
        with matplotlib.rc_context():
            i18n.figure_fonts()  # what a Chinese edition's set_language does
            fig = plots.image_grid(np.zeros((3, 8, 8)), names, ncols=3)
            fig.canvas.draw()
        boxes = [ax.title.get_window_extent(fig.canvas.get_renderer()) for ax in fig.axes[:3]]
        assert all(left.x1 < right.x0 for left, right in zip(boxes, boxes[1:])), names
        plt.close(fig)
