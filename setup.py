"""Compiles the message catalogs (``nn_from_scratch/locale/*/LC_MESSAGES/*.po`` -> ``.mo``)
when the package is built or installed; everything else is in pyproject.toml."""
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithCatalogs(build_py):
    """build_py, then the .mo files: in the build for a wheel, in place for ``pip install -e``."""

    def run(self) -> None:
        super().run()
        from babel.messages.mofile import write_mo
        from babel.messages.pofile import read_po

        for po in sorted(Path("nn_from_scratch/locale").glob("*/LC_MESSAGES/*.po")):
            target = po if self.editable_mode else Path(self.build_lib) / po
            target.parent.mkdir(parents=True, exist_ok=True)
            with po.open("rb") as f:
                catalog = read_po(f)
            with target.with_suffix(".mo").open("wb") as f:
                write_mo(f, catalog)


setup(cmdclass={"build_py": BuildWithCatalogs})
