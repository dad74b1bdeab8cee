"""What a statement does that it does not spell out, written out for the grader's reading.

A class pattern reads attributes by name, as ``getattr`` does: ``case object(__globals__=ns)``
is ``ns = subject.__globals__``, and ``case object(exec=run)`` reads ``exec`` off whatever it
matches. Read as written, such a pattern named no attribute the reading looks for: red team
round twenty reached the library's namespace, then ``builtins.exec``, 6/7 with every stub
untouched and no note. :func:`patterns_read` writes each keyword of a class pattern out, at
the top of its case, as the attribute read it is, so that every rule of the reading
(:mod:`.allowed`, :mod:`.unseen`, :mod:`.reaching`) sees it.
"""
import ast
import copy

__all__ = ["patterns_read"]

# the object a nested class pattern reads from: what the reading cannot name
_NESTED = "_matched"


def patterns_read(tree: ast.Module) -> ast.Module:
    """``tree`` (changed in place) with, at the top of each ``case`` whose pattern is or holds
    a class pattern with keywords, one statement per keyword: ``name = subject.attribute``
    where the keyword captures a name from the match's subject itself, else the attribute
    read alone (``_matched.attribute``: a nested pattern reads from what it matched)."""
    for match in [node for node in ast.walk(tree) if isinstance(node, ast.Match)]:
        for case in match.cases:
            reads: list[ast.stmt] = []
            outer = _outer_classes(case.pattern)
            for pattern in ast.walk(case.pattern):
                if not isinstance(pattern, ast.MatchClass):
                    continue
                subject = copy.deepcopy(match.subject) if pattern in outer else \
                    ast.Name(_NESTED, ast.Load())
                for attribute, captured in zip(pattern.kwd_attrs, pattern.kwd_patterns):
                    read = ast.Attribute(copy.deepcopy(subject), attribute, ast.Load())
                    if isinstance(captured, ast.MatchAs) and captured.pattern is None and \
                            captured.name and pattern in outer:
                        reads.append(ast.Assign([ast.Name(captured.name, ast.Store())], read))
                    else:
                        reads.append(ast.Expr(read))
            if reads:
                case.body[:0] = reads
    return ast.fix_missing_locations(tree)


def _outer_classes(pattern: ast.pattern) -> list[ast.pattern]:
    """The class patterns that match the subject itself: ``pattern``, or one of an ``|`` or an
    ``as`` around it."""
    if isinstance(pattern, ast.MatchClass):
        return [pattern]
    if isinstance(pattern, ast.MatchOr):
        return [found for option in pattern.patterns for found in _outer_classes(option)]
    if isinstance(pattern, ast.MatchAs) and pattern.pattern is not None:
        return _outer_classes(pattern.pattern)
    return []
