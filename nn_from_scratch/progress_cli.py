"""``python -m nn_from_scratch progress [FOLDER]``: the command line of :mod:`.progress` (which
gathers a student's lessons and exercises) and :mod:`.progress_page` (which writes them as a
page); apart from both, so that neither imports the other.
"""
import argparse
from pathlib import Path

from ._checks import InputError, check_writable_folder
from .i18n import _, set_language
from .progress import existing_folder, format_progress, gather
from .progress_page import write_progress
from .sandbox import Unavailable

__all__ = ["add_arguments", "progress_command"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("folder", nargs="?", default="student", metavar="FOLDER",
                        help="the folder of your notebooks (default: student, the student "
                             "edition in this folder; student/zh for the Chinese one)")
    parser.add_argument("--html", metavar="FILE", help="where to write the page (default: "
                        "progress.html in FOLDER)")
    parser.add_argument("--lang", choices=("en", "zh"), default=None,
                        help="the language of the page and the hints (default: your notebooks')")
    parser.add_argument("--no-sandbox", action="store_true",
                        help="run your notebooks with your own rights, not each in a sandbox "
                             "(only where the sandbox cannot start)")


def progress_command(args: argparse.Namespace) -> int:
    """Grade, print the lessons, write the page; exit status 0 when every exercise passed."""

    lang = {"en": "en", "zh": "zh_CN", None: None}[args.lang]
    if lang:  # the errors too
        set_language(lang)
    page = Path(args.html) if args.html else existing_folder(args.folder) / "progress.html"
    if page.suffix.lower() not in (".html", ".htm"):
        raise InputError(_("--html {path}: the page is HTML; name it FILE.html, e.g. --html "
                           "progress.html.").format(path=args.html))
    check_writable_folder(page.parent, "--html", str(page))
    try:
        progress = gather(args.folder, lang, sandbox=not args.no_sandbox)
    except Unavailable as err:
        raise InputError(str(err)) from None
    print(format_progress(progress))
    write_progress(progress, page)
    print(_("the same as a page: {path}").format(path=page))
    everything = [status for lesson in progress.lessons for _e, _t, status, _m in lesson.exercises]
    return 0 if all(status == "passed" for status in everything) else 1
