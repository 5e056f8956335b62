"""A batch script read with a real bash parser (tree-sitter's bash grammar) and its batch shell evaluated
symbolically, never run.

Reading: every simple command of the script, in the order the batch shell runs it, as :class:`~ntui.core.compose.
shellwords.Command` values: its words as written (each part's quoting kept, so ``'$SLURM_JOB_ID'`` is told from
``"$SLURM_JOB_ID"``) and its words as the batch shell expands them (:attr:`Command.expanded`).

Evaluating: assignments and exports in order (``NAME=value``, ``export``, ``declare``, ``local``), arrays
(``A=(...)``, ``A+=(...)``, ``"${A[@]}"``), ``${VAR:-default}``, functions (their bodies run at each call with the
call's arguments as ``$1``... and ``"$@"``), word splitting of unquoted expansions, an empty unquoted expansion
that leaves no word. A value set on one path only (inside an ``if``, a loop, after ``&&``) is unknown after it,
unless that path only extends it (``CMD="$CMD --load x"``): then it keeps the value every path has, and
:attr:`Var.extended` says what the one path adds. What the script alone does not decide (the environment,
``$(...)``, Slurm's variables) stays an unknown expansion: a part quoted ``"$"`` holding ``$NAME``, with the line
it was expanded on. Every literal part keeps the line its text was written on, so a value used far from its
assignment is still found at its own line.

:func:`task_commands` reads a ``bash -c`` body the same way, as each task's shell does: the batch shell's exported
values are known there, its unexported ones are not, and what the batch shell already expanded stays expanded.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ntui.core.compose.shellwords import Command, Part, Word

__all__ = ["BATCH", "Var", "commands", "has_error", "task_commands"]

#: The quote of a part the batch shell expanded without knowing its value (``$NAME``, ``$(...)``).
BATCH = "$"
#: Where one field of a ``"$@"`` / ``"${A[@]}"`` expansion ends and the next begins.
_BOUNDARY_QUOTE = "<field>"
#: A batch-expanded unknown inside a ``bash -c`` body: its index in a name the grammar reads as a word's letters.
_MARK = re.compile("__ntui_batch_([0-9]+)__")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class _Seg:
    text: str
    quote: str  # "'": literal text; "$": the batch shell's unknown expansion; "": an unknown this shell expands
    line: int


@dataclass
class Var:
    """A variable of the batch shell: its value (or an array's elements), the line it was set on, exported."""

    value: list[_Seg] | None  # None: set from what the script does not decide
    line: int
    exported: bool = False
    array: list[list[_Seg]] | None = None
    #: what one path only adds to the value (``CMD="$CMD --load x"`` inside an ``if``): (line, the text added);
    #: the value is the one every path has, the one without it
    extended: tuple[tuple[int, str], ...] = ()


def _lead(text: str) -> int:
    """How much of a node's text is blanks and line continuations the grammar kept in front of it."""
    m = re.match(r"(?:[ \t\n]|\\\n)+", text)
    return m.end() if m else 0


@lru_cache(maxsize=1)
def _parser() -> Any:
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


#: How many times a text is read again for its run-on commands before the tree is taken as it is.
_MAX_PASSES = 8


def _run_on(node: Any, src: bytes) -> list[int]:
    """Where simple commands under ``node`` run on past an unescaped line end, as bash never does: the byte each
    one's line's own words end at. The grammar does so after a line of two or more assignments (``A=1 B=2``) and
    after a pipeline of three or more stages: the next line's command, ``while`` or ``if`` included, becomes that
    command's name and arguments (tree-sitter-bash issues 228, 342 and 347). A comment between two of its words
    ends the line whatever it ends with."""
    found: list[int] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "command":
            last: int | None = None
            commented = False
            for c in n.children:
                if c.type == "comment":
                    commented = True
                    continue
                if last is not None:
                    gap = src[last:c.start_byte]
                    if commented or any(b == 0x0A and (i == 0 or gap[i - 1] != 0x5C) for i, b in enumerate(gap)):
                        found.append(last)
                        break  # the rest of it is read again once cut
                last, commented = c.end_byte, False
        stack.extend(reversed(n.children))
    return found


def _parse(src: bytes) -> tuple[Any, bytes, list[int]]:
    """The grammar's tree of ``src`` with every run-on command (:func:`_run_on`) cut where its line ends, by a ``;``
    put there; the text read, and where each ``;`` went (in the order put, each in the text as it was then)."""
    cuts: list[int] = []
    tree = _parser().parse(src)
    for _ in range(_MAX_PASSES):
        found = _run_on(tree.root_node, src)
        if not found:
            break
        for at in sorted(set(found), reverse=True):  # from the end: each place still where it was found
            src = src[:at] + b";" + src[at:]
            cuts.append(at)
        tree = _parser().parse(src)
    return tree, src, cuts


def commands(text: str) -> list[Command]:
    """The simple commands of a batch script in the order its shell runs them (a function's body at its calls),
    each with its words as written and as expanded (module docstring). Never raises for a line it cannot read:
    the grammar recovers, and what it could not read is left out."""
    tree, src, _ = _parse(text.encode())
    reader = _Reader(src, {}, None, lambda line: line)
    reader.block(tree.root_node, 0, None)
    return reader.out


def _join(pieces: list[list[Word]]) -> list[Word]:
    """The fields of nodes written with no blank between them: the last field of one and the first of the next are
    one word (bash splits words on blanks only)."""
    out: list[Word] = []
    for fields in pieces:
        if out and fields:
            last, first = out[-1], fields[0]
            out[-1] = Word((*last.parts, *first.parts), last.raw + first.raw, last.line)
            out += fields[1:]
        else:
            out += fields
    return out


def has_error(text: str) -> bool:
    """Whether the grammar had to recover somewhere in ``text`` (an unterminated quote, a missing ``fi``)."""
    return bool(_parser().parse(text.encode()).root_node.has_error)


def task_commands(payload: Word, env: dict[str, Var]) -> list[Command]:
    """``bash -c PAYLOAD`` as each task's shell reads it: the batch shell's exported variables (``env``) known, the
    batch shell's own expansions kept as they were, every word at the script's line its text came from."""
    reader = _reread(payload, {k: v for k, v in env.items() if v.exported}, None, "")
    return reader.out


def _reread(word: Word, env: dict[str, Var], positional: list[list[_Seg]] | None, unknown: str,
            calls: int = 0) -> _Reader:
    """A word read again as a script (a ``bash -c`` body, ``eval``'s arguments): what the shell that built it
    expanded without knowing stays so, each byte at the line it was written on."""
    text: list[str] = []
    lines: list[int] = []
    unknowns: list[Part] = []
    for p in word.parts:
        if p.quote == BATCH:
            piece = f"__ntui_batch_{len(unknowns)}__"
            unknowns.append(p)
        else:
            piece = p.text
        text.append(piece)
        lines += [p.line or word.line] * len(piece.encode())
    tree, src, cuts = _parse("".join(text).encode())
    for at in cuts:  # each ";" put in at the line its words end on
        lines.insert(at, lines[at - 1] if 0 < at <= len(lines) else word.line)

    def line_of(row_byte: int) -> int:
        return lines[row_byte] if 0 <= row_byte < len(lines) else word.line

    reader = _Reader(src, env, positional, line_of, unknowns or [Part("", BATCH)])
    reader.unknown = unknown
    reader.calls = calls  # eval inside eval, a function calling itself: bounded as one nesting
    reader.block(tree.root_node, 0, None)
    return reader


class _Reader:
    def __init__(self, src: bytes, env: dict[str, Var], positional: list[list[_Seg]] | None,
                 line_of: Any, unknowns: Sequence[Part] = ()) -> None:
        self.src = src
        self.env = env
        self.positional = positional
        self.functions: dict[str, Any] = {}
        self.definitions: dict[str, tuple[int, int]] = {}  # each function's lines, from its name to its brace
        self.out: list[Command] = []
        self._line_of = line_of
        self.unknowns = unknowns
        self.by_bytes = unknowns != ()
        self.unknown = BATCH if not self.by_bytes else ""  # who expands what this shell does not know
        self.calls = 0
        self.conditional = 0  # inside an if, a loop, a case or after && / ||: what it assigns may not happen

    # ------------------------------------------------------------------ positions and text

    def line(self, node: Any, offset: int = 0) -> int:
        if self.by_bytes:
            return int(self._line_of(node.start_byte + offset))
        if offset:
            return int(node.start_point[0]) + 1 + self.src[node.start_byte:node.start_byte + offset].count(b"\n")
        return int(node.start_point[0]) + 1

    def text(self, node: Any) -> str:
        return self.src[node.start_byte:node.end_byte].decode(errors="replace")

    def shown(self, text: str) -> str:
        """``text`` with the batch shell's unknowns written back as the script wrote them."""
        if not self.unknowns:
            return text
        return _MARK.sub(lambda m: self.unknowns[int(m.group(1))].text if int(m.group(1)) < len(self.unknowns)
                         else m.group(0), text)

    # ------------------------------------------------------------------ statements

    def block(self, node: Any, depth: int, construct: tuple[int, int] | None) -> None:
        children = list(node.named_children)
        for i, child in enumerate(children):
            after = child.next_sibling
            sep = after.type if after is not None and not after.is_named and after.type in (";", "&", "&&", "||") \
                else ""
            self.statement(child, depth, construct, sep)
            del i

    def statement(self, node: Any, depth: int, construct: tuple[int, int] | None, sep: str = "") -> None:
        kind = node.type
        if kind in ("comment", "heredoc_body", "heredoc_end"):
            return
        if depth == 0 and construct is None and kind in ("if_statement", "for_statement", "while_statement",
                                                          "c_style_for_statement", "case_statement",
                                                          "compound_statement", "subshell", "until_statement"):
            construct = (self.line(node), int(node.end_point[0]) + 1)
        if kind == "function_definition":
            name = node.child_by_field_name("name")
            body = node.child_by_field_name("body")
            if name is not None and body is not None:
                self.functions[self.text(name)] = body
                self.definitions[self.text(name)] = (self.line(node), int(node.end_point[0]) + 1)
            return
        if kind == "redirected_statement":
            body = node.child_by_field_name("body")
            redirects = [c for c in node.named_children if body is None or c.id != body.id]
            heredoc: list[str] = []
            for r in redirects:
                if r.type == "heredoc_redirect":
                    for c in r.named_children:
                        if c.type == "heredoc_body":
                            heredoc = self.text(c).rstrip("\n").split("\n")
            if body is None:
                return
            before = len(self.out)
            self.statement(body, depth, construct, sep)
            if len(self.out) > before:
                last = self.out[-1]
                last.words = last.words + [self._redirect(r) for r in redirects if r.type != "heredoc_redirect"]
                last.end_line = max(last.end_line, *(int(r.end_point[0]) + 1 for r in redirects
                                                     if r.type != "heredoc_redirect"), last.end_line)
                if heredoc:
                    last.heredoc = heredoc
            return
        if kind == "pipeline":
            parts = list(node.named_children)
            for j, c in enumerate(parts):
                self.statement(c, depth, construct, "|" if j < len(parts) - 1 else sep)
            return
        if kind == "list":
            parts = list(node.named_children)
            for j, c in enumerate(parts):
                op = c.next_sibling
                self.conditional += j > 0
                try:
                    self.statement(c, depth, construct, op.type if j < len(parts) - 1 and op is not None else sep)
                finally:
                    self.conditional -= j > 0
            return
        if kind in ("negated_command",):
            for c in node.named_children:
                self.statement(c, depth, construct, sep)
            return
        if kind in ("command", "declaration_command", "variable_assignment", "variable_assignments",
                    "unset_command", "test_command"):
            self.simple(node, depth, construct, sep)
            return
        if kind == "compound_statement" and self.text(node).startswith("(("):
            self._arithmetic(node)  # (( NAME = ... )): a value the script computes
            word = Word((Part(self.text(node), "'", self.line(node)),), self.text(node), self.line(node))
            self._emit(node, [word], [], depth, construct, sep)
            return
        if kind in ("if_statement", "elif_clause", "else_clause", "while_statement", "until_statement",
                    "compound_statement", "subshell", "do_group", "case_statement", "case_item",
                    "for_statement", "c_style_for_statement", "program", "ERROR"):
            if kind == "for_statement":
                var = node.child_by_field_name("variable")
                if var is not None:
                    self.env[self.text(var)] = Var(None, self.line(node))
            inner = depth + (0 if kind in ("elif_clause", "else_clause", "do_group", "case_item", "program",
                                           "ERROR") else 1)
            branch = kind not in ("compound_statement", "subshell", "program", "ERROR", "do_group")
            self.conditional += branch
            try:
                self._walk(node, kind, inner, construct)
            finally:
                self.conditional -= branch
            return
        # anything else (a bare expansion, an arithmetic command): walk what it holds
        for c in node.named_children:
            if c.type in ("command", "pipeline", "list", "redirected_statement"):
                self.statement(c, depth, construct, sep)

    def _walk(self, node: Any, kind: str, inner: int, construct: tuple[int, int] | None) -> None:
        """A compound command's parts: its conditions and bodies (a loop's list of words and a case's patterns are
        no commands)."""
        condition = node.child_by_field_name("condition")
        for c in node.named_children:
            if condition is not None and c.id == condition.id:
                self.statement(c, inner, construct, "")
            elif c.type in ("word", "string", "raw_string", "concatenation", "simple_expansion", "expansion",
                            "command_substitution", "variable_name", "number") and kind in (
                                "for_statement", "case_statement", "case_item"):
                continue
            else:
                self.statement(c, inner, construct, "")

    def _arithmetic(self, node: Any) -> None:
        """The variables an arithmetic command assigns (``x = 1``, ``x += 2``, ``i++``): set, value unknown."""
        stack = list(node.named_children)
        while stack:
            n = stack.pop()
            ops = [c.type for c in n.children if not c.is_named]
            target = n.named_children[0] if n.named_children else None
            if target is not None and target.type == "variable_name" and (
                    n.type in ("postfix_expression", "unary_expression") and any(o in ("++", "--") for o in ops)
                    or n.type == "binary_expression" and any(o.endswith("=") and o not in ("==", "!=", "<=", ">=")
                                                             for o in ops)):
                name = self.text(target)
                old = self.env.get(name)
                self.env[name] = Var(None, self.line(n), bool(old and old.exported))
            stack += list(n.named_children)

    def _redirect(self, node: Any) -> Word:
        op = next((c for c in node.children if not c.is_named), None)
        target = [c for c in node.named_children if c.type != "file_descriptor"]
        parts = [Part(self.text(op) if op is not None else ">", "<redirect>", self.line(node))]
        for t in target:
            parts += list(self.written(t).parts)
        return Word(tuple(parts), self.text(node), self.line(node))

    def simple(self, node: Any, depth: int, construct: tuple[int, int] | None, sep: str) -> None:
        kind = node.type
        written: list[Word] = []
        expanded: list[Word] = []
        line = self.line(node)
        if kind in ("variable_assignment", "variable_assignments"):
            assigns = [node] if kind == "variable_assignment" else [c for c in node.named_children
                                                                     if c.type == "variable_assignment"]
            for a in assigns:
                written.append(self.written(a))
                self.assign(a, exported=None)
                expanded.append(self.written(a))
            self._emit(node, written, expanded, depth, construct, sep)
            return
        if kind == "declaration_command":
            keyword = self.text(node.children[0])
            written.append(Word((Part(keyword, "", line),), keyword, line))
            options = [self.text(c) for c in node.named_children if c.type == "word" and self.text(c).startswith("-")]
            export = keyword == "export" or any("x" in o for o in options)
            is_array = any("a" in o for o in options)
            for c in node.named_children:
                written.append(self.written(c))
                if c.type == "variable_assignment":
                    self.assign(c, exported=True if export else None, local_array=is_array)
                elif c.type == "variable_name" and export:
                    name = self.text(c)
                    var = self.env.get(name)
                    self.env[name] = Var(None, self.line(c), True) if var is None else Var(
                        var.value, var.line, True, var.array, var.extended)
            self._emit(node, written, list(written), depth, construct, sep)
            return
        if kind == "unset_command":
            for c in node.named_children:
                self.env.pop(self.text(c), None)
                written.append(self.written(c))
            self._emit(node, [Word((Part("unset", "", line),), "unset", line), *written], [], depth, construct, sep)
            return
        if kind == "test_command":
            self._emit(node, [Word((Part(self.text(node), "'", line),), self.text(node), line)], [], depth,
                       construct, sep)
            return
        prefix: list[tuple[Any, Word]] = []
        args: list[Any] = []
        for c in node.named_children:
            if c.type == "variable_assignment" and not args:
                prefix.append((c, self.written(c)))
            elif c.type == "command_name":
                args.append(c.named_children[0] if c.named_children else c)
            elif c.type in ("file_redirect", "herestring_redirect"):
                written.append(self._redirect(c))
            else:
                args.append(c)
        runs: list[list[Any]] = []  # nodes with no blank between them are one word to bash (`a,`pwd``)
        for a in args:
            if runs and runs[-1][-1].end_byte == a.start_byte:
                runs[-1].append(a)
            else:
                runs.append([a])
        written = [w for _, w in prefix] + [_join([[self.written(a)] for a in run])[0] for run in runs] + written
        for a, _ in prefix:
            value = a.child_by_field_name("value")
            name = a.child_by_field_name("name")
            segs = self.scalar(value) if value is not None else []
            head = Part(f"{self.text(name) if name is not None else ''}=", "", self.line(a))
            expanded.append(Word((head, *self._parts(segs or [])), self.text(a), self.line(a)))
        fields: list[Word] = []
        for run in runs:
            fields += _join([self.fields(a) for a in run])
        expanded += fields
        name = fields[0].text if fields else ""
        body = self.functions.get(name) if fields and fields[0].plain else None
        if body is not None and self.calls < 8:
            self._emit(node, written, expanded, depth, construct, sep)
            self.out[-1].calls = self.definitions.get(name) if not self.by_bytes else None
            self._call(body, fields[1:], depth, construct)
            return
        if name == "shift" and self.positional is not None:
            n = int(fields[1].text) if len(fields) > 1 and fields[1].text.isdigit() else 1
            self.positional = self.positional[n:]
        if name == "let":
            for w in fields[1:]:
                if (m := _NAME.match(w.text)) is not None and w.text[m.end():m.end() + 1] in ("=", "+", "-", "*"):
                    self.env[m.group(0)] = Var(None, w.line, bool(self.env.get(m.group(0), Var(None, 0)).exported))
        if name == "eval" and len(fields) > 1 and self.calls < 8 and fields[0].plain:
            self._eval(fields[1:], depth, construct, sep)
            return
        if name in (".", "source") or not fields:
            for a, _ in prefix:
                self.assign(a, exported=None)
        self._emit(node, written, expanded, depth, construct, sep)

    def _eval(self, args: list[Word], depth: int, construct: tuple[int, int] | None, sep: str) -> None:
        """``eval WORDS``: the words joined by blanks, read as commands of this shell (its variables, its
        functions), each at the lines its pieces were written on."""
        parts: list[Part] = []
        for i, w in enumerate(args):
            parts += [Part(" ", "'", w.line)] if i else []
            parts += [p if p.quote in (BATCH, "'") else Part(p.text, "'", p.line) for p in w.parts]
        inner = _reread(Word(tuple(parts), " ".join(w.raw for w in args), args[0].line), self.env, self.positional,
                        BATCH, self.calls + 1)
        for c in inner.out:
            c.depth += depth
            c.construct = construct if construct is not None else c.construct
            self.out.append(c)
        self.functions.update(inner.functions)
        if inner.out and sep:
            inner.out[-1].separator = sep

    def _call(self, body: Any, args: list[Word], depth: int, construct: tuple[int, int] | None) -> None:
        saved = self.positional
        self.positional = [[_Seg(p.text, p.quote, p.line or w.line) for p in w.parts] for w in args]
        self.calls += 1
        first = len(self.out)
        try:
            self.block(body, depth, construct)
        finally:
            self.calls -= 1
            self.positional = saved
        span = (self.line(body), int(body.end_point[0]) + 1) if not self.by_bytes else None
        for c in self.out[first:]:
            c.function = c.function or span  # ran by a call: its text is the function's body

    def _emit(self, node: Any, written: list[Word], expanded: list[Word], depth: int,
              construct: tuple[int, int] | None, sep: str) -> None:
        if not written:
            return
        cmd = Command(written, self.line(node), self.line(node) + self.text(node).count("\n"), depth, sep)
        cmd.construct = construct
        cmd.expanded = expanded
        cmd.scope = dict(self.env)
        self.out.append(cmd)

    # ------------------------------------------------------------------ assignments

    def assign(self, node: Any, exported: bool | None, local_array: bool = False) -> None:
        name_node = node.child_by_field_name("name")
        if name_node is None:
            return
        name = self.text(name_node)
        if name_node.type == "subscript":
            base = name_node.child_by_field_name("name")
            name = self.text(base) if base is not None else name.split("[", 1)[0]
            self.env[name] = Var(None, self.line(node), self.env.get(name, Var(None, 0)).exported)
            return
        value = node.child_by_field_name("value")
        appending = any(not c.is_named and c.type == "+=" for c in node.children)
        old = self.env.get(name)
        keep_export = bool(old and old.exported)
        line = self.line(node)
        if value is not None and value.type == "array":
            elements: list[list[_Seg]] = []
            for c in value.named_children:
                elements += [self._segs_of(w) for w in self.fields(c)]
            if appending and old is not None and old.array is not None:
                elements = old.array + elements
            if self.conditional:
                self.env[name] = Var(None, line, bool(exported) or keep_export)
                return
            self.env[name] = Var(elements[0] if elements else [], line, bool(exported) or keep_export, elements)
            return
        segs = self.scalar(value) if value is not None else []
        if appending and old is not None:
            segs = (old.value + segs) if old.value is not None and segs is not None else None
        if self.conditional and old is not None and old.value is not None and segs is not None and \
                len(segs) > len(old.value) and segs[:len(old.value)] == old.value:
            added = "".join(s.text for s in segs[len(old.value):])  # extended on one path: the value without it
            self.env[name] = Var(old.value, old.line, bool(exported) or keep_export, old.array,
                                 (*old.extended, (line, added)))
            return
        if self.conditional:
            segs = None  # set on one path only: the script alone does not decide it
        self.env[name] = Var(segs, line, bool(exported) or keep_export)
        del local_array

    @staticmethod
    def _segs_of(word: Word) -> list[_Seg]:
        return [_Seg(p.text, p.quote, p.line or word.line) for p in word.parts]

    def scalar(self, node: Any) -> list[_Seg] | None:
        """A word's value without word splitting (an assignment's right side)."""
        segs: list[_Seg] = []
        for piece, _split in self.pieces(node, quoted=True):
            segs += [s if s.quote != _BOUNDARY_QUOTE else _Seg(" ", "'", s.line) for s in piece]
        return segs

    # ------------------------------------------------------------------ words

    def written(self, node: Any) -> Word:
        """The word as written: each part with its quoting, nothing expanded."""
        parts: list[Part] = []
        self._written(node, parts, "")
        return Word(tuple(parts), self.text(node), self.line(node))

    def _written(self, node: Any, parts: list[Part], quote: str) -> None:
        kind = node.type
        line = self.line(node)
        if kind == "string":
            for c in node.children:
                if c.is_named:
                    self._written(c, parts, '"')
            if not node.named_children:
                parts.append(Part("", '"', line))
            return
        if kind == "string_content":
            self._unescape(self.text(node), parts, '"', node)
            return
        if kind == "raw_string":
            parts.append(Part(self.text(node)[1:-1], "'", line))
            return
        if kind == "ansi_c_string":
            parts.append(Part(self.text(node)[2:-1], "'", line))
            return
        if kind == "array":
            cursor = node.start_byte
            for c in node.children:
                if c.start_byte > cursor:
                    parts.append(Part(self.src[cursor:c.start_byte].decode(errors="replace"), "'", line))
                if c.is_named:
                    self._written(c, parts, quote)
                else:
                    parts.append(Part(self.text(c), "'", self.line(c)))
                cursor = c.end_byte
            return
        if kind in ("concatenation", "variable_assignment") and node.named_children:
            if kind == "variable_assignment":
                name = node.child_by_field_name("name")
                value = node.child_by_field_name("value")
                op = "+=" if any(not c.is_named and c.type == "+=" for c in node.children) else "="
                parts.append(Part((self.text(name) if name is not None else "") + op, quote, line))
                if value is not None:
                    self._written(value, parts, quote)
                return
            cursor = node.start_byte
            for c in node.children:
                if c.start_byte > cursor:  # text the grammar left between children
                    parts.append(Part(self.src[cursor:c.start_byte].decode(errors="replace"), quote, line))
                self._written(c, parts, quote)
                cursor = c.end_byte
            return
        if kind == "word" and quote == "":
            self._unescape(self.text(node), parts, "", node)
            return
        parts.append(Part(self.text(node), quote, line))

    def _unescape(self, raw: str, parts: list[Part], quote: str, node: Any) -> None:
        """Backslashes: in a double-quoted string only before ``"``, ``\\``, ``$``, a backquote or a newline;
        unquoted before anything. An escaped character is literal text, a part of its own; each part keeps the
        line its text starts on."""
        buf: list[str] = []
        start = 0
        i = 0
        escapable = '"\\$`\n' if quote == '"' else None

        def flush(upto: int) -> None:
            nonlocal buf, start
            if buf:
                parts.append(Part("".join(buf), quote, self.line(node, start)))
            buf = []
            start = upto

        while i < len(raw):
            c = raw[i]
            if c == "\\" and i + 1 < len(raw) and (escapable is None or raw[i + 1] in escapable):
                flush(i)
                if raw[i + 1] != "\n":
                    parts.append(Part(raw[i + 1], "'", self.line(node, i)))
                i += 2
                start = i
                continue
            if self.unknowns and c == "_" and raw.startswith("__ntui_batch_", i):
                m = _MARK.match(raw, i)
                if m is not None:
                    flush(i)
                    parts.append(self.unknowns[int(m.group(1))])
                    i = m.end()
                    start = i
                    continue
            if self.by_bytes and buf and self.line(node, i) != self.line(node, start):
                flush(i)  # a body built from values written on several lines: each piece at its own
            buf.append(c)
            i += 1
            if c == "\n":
                flush(i)
        flush(i)

    def fields(self, node: Any) -> list[Word]:
        """The words the shell makes of one argument: expansions substituted, unquoted ones split on blanks."""
        out: list[list[_Seg]] = [[]]
        quoted_any = False
        started = False  # the current field holds something, even an empty quoted string
        for segs, split in self.pieces(node, quoted=False):
            if segs and segs[0].quote == _BOUNDARY_QUOTE:
                out.append([])
                continue
            if not split:
                out[-1] += segs
                started = True
                quoted_any = True
                continue
            for seg in segs:
                if seg.quote != "'":
                    out[-1].append(seg)
                    started = True
                    continue
                chunks = re.split(r"([ \t\n]+)", seg.text)
                for j, chunk in enumerate(chunks):
                    if j % 2 == 1:
                        if started:
                            out.append([])
                            started = False
                        continue
                    if chunk:
                        out[-1].append(_Seg(chunk, "'", seg.line + seg.text[:seg.text.find(chunk)].count("\n")))
                        started = True
        if not started and not quoted_any:
            out.pop()
        words = []
        for segs in out:
            if not segs and not quoted_any:
                continue
            line = segs[0].line if segs else self.line(node)
            raw = self.shown(self.text(node)) if len(out) == 1 else "".join(s.text for s in segs)
            words.append(Word(tuple(self._parts(segs)) or (Part("", '"', line),), raw, line))
        return words

    @staticmethod
    def _parts(segs: Sequence[_Seg]) -> list[Part]:
        parts: list[Part] = []
        for s in segs:
            if parts and parts[-1].quote == s.quote == "'" and parts[-1].line == s.line:
                parts[-1] = Part(parts[-1].text + s.text, "'", s.line)
            else:
                parts.append(Part(s.text, s.quote, s.line))
        return parts

    def pieces(self, node: Any, quoted: bool) -> Iterator[tuple[list[_Seg], bool]]:
        """The node's value as pieces: (segments, whether the shell splits them on blanks)."""
        kind = node.type
        line = self.line(node)
        if kind in ("word", "number", "variable_name", "special_variable_name", "string_content", "raw_string",
                    "ansi_c_string", "heredoc_content"):
            if kind == "raw_string":
                yield [_Seg(self.text(node)[1:-1], "'", line)], False
                return
            if kind == "ansi_c_string":
                yield [_Seg(self.text(node)[2:-1].replace("\\t", "\t").replace("\\n", "\n"), "'", line)], False
                return
            parts: list[Part] = []
            self._unescape(self.text(node), parts, '"' if kind == "string_content" else "", node)
            yield [_Seg(p.text, BATCH if p.quote == BATCH else "'", p.line) for p in parts], False
            return
        if kind == "string":
            if not node.named_children:
                yield [], False
            cursor = node.start_byte + 1
            for c in node.named_children:
                if c.start_byte > cursor:  # text the grammar left between children: "\<newline>" joins lines
                    gap = self.src[cursor:c.start_byte].decode(errors="replace")
                    yield [_Seg(re.sub(r'\\(\n|["\\$`])', lambda m: "" if m.group(1) == "\n" else m.group(1), gap),
                                "'", line)], False
                for piece, _ in self.pieces(c, quoted=True):
                    yield piece, False
                cursor = c.end_byte
            return
        lead = _lead(self.text(node))
        if lead and kind in ("simple_expansion", "expansion", "command_substitution", "arithmetic_expansion"):
            yield [_Seg(self.text(node)[:lead].replace("\\\n", ""), "'", line)], False  # blanks the grammar keeps
            # in the node, where "\\<newline>" joins lines
            line = self.line(node, lead)
        if kind == "concatenation":
            cursor = node.start_byte
            for c in node.children:
                if c.start_byte > cursor:
                    yield [_Seg(self.src[cursor:c.start_byte].decode(errors="replace"), "'", line)], False
                yield from self.pieces(c, quoted)
                cursor = c.end_byte
            return
        if kind == "simple_expansion":
            name_node = node.named_children[0] if node.named_children else None
            name = self.text(name_node) if name_node is not None else ""
            yield from self._expand(name, None, node, quoted, self.text(node)[_lead(self.text(node)):])
            return
        if kind == "expansion":
            yield from self._expansion(node, quoted)
            return
        if kind == "array":
            for c in node.named_children:
                yield from self.pieces(c, quoted)
            return
        # $(...), `...`, $((...)), <(...): what the script alone does not decide
        yield [_Seg(self.text(node)[_lead(self.text(node)):], self.unknown, line)], False

    def _expansion(self, node: Any, quoted: bool) -> Iterator[tuple[list[_Seg], bool]]:
        named = list(node.named_children)
        text = self.text(node)[_lead(self.text(node)):]
        if not named:
            yield [_Seg(text, self.unknown, self.line(node))], False
            return
        first = named[0]
        ops = [c.type for c in node.children if not c.is_named and c.type not in ("${", "}")]
        if first.type == "subscript":
            base = first.child_by_field_name("name")
            index = first.child_by_field_name("index")
            name = self.text(base) if base is not None else ""
            idx = self.text(index) if index is not None else ""
            if ops:
                yield [_Seg(text, self.unknown, self.line(node))], False
                return
            yield from self._expand(name, idx, node, quoted)
            return
        if first.type not in ("variable_name", "special_variable_name") or (ops and ops[0] not in (
                ":-", "-", ":=", "=")) or text.startswith(("${#", "${!")):
            yield [_Seg(text, self.unknown, self.line(node))], False
            return
        name = self.text(first)
        var = self.env.get(name)
        empty = var is None or (ops[:1] in ([":-"], [":="]) and var.value == [] and var.array is None)
        if ops and empty and name not in ("@", "*") and not name.isdigit() and len(named) > 1:
            default: list[_Seg] = []
            for c in named[1:]:  # ${VAR:-default}: the default, where the script does not set VAR
                for piece, split in self.pieces(c, quoted):
                    default += piece
                    yield piece, split
            if ops[0] in (":=", "="):  # ${VAR:=default} assigns it too
                self.env[name] = Var(None if self.conditional else default, self.line(node),
                                     bool(var and var.exported))
            return
        yield from self._expand(name, None, node, quoted, text)

    def _expand(self, name: str, index: str | None, node: Any, quoted: bool,
                shown: str | None = None) -> Iterator[tuple[list[_Seg], bool]]:
        line = self.line(node)
        text = self.text(node)
        line = self.line(node, _lead(text))
        unknown = [_Seg(shown or text[_lead(text):], self.unknown, line)]
        if name.isdigit() or name in ("@", "*"):
            if self.positional is None:
                yield unknown, False
                return
            if name.isdigit():
                n = int(name)
                if n == 0:
                    yield unknown, False
                elif n <= len(self.positional):
                    yield self.positional[n - 1], not quoted
                return
            if name == "@" and quoted:
                for j, p in enumerate(self.positional):
                    yield p, False
                    if j < len(self.positional) - 1:
                        yield [_Seg("", _BOUNDARY_QUOTE, line)], False
                return
            joined: list[_Seg] = []
            for j, p in enumerate(self.positional):
                joined += p + ([_Seg(" ", "'", line)] if j < len(self.positional) - 1 else [])
            yield joined, not quoted
            return
        var = self.env.get(name)
        if var is None or (var.value is None and var.array is None):
            yield unknown, False
            return
        if index in ("@", "*") and var.array is not None:
            if index == "@" and quoted:
                for j, el in enumerate(var.array):
                    yield el, False
                    if j < len(var.array) - 1:
                        yield [_Seg("", _BOUNDARY_QUOTE, line)], False
                return
            joined = []
            for j, el in enumerate(var.array):
                joined += el + ([_Seg(" ", "'", line)] if j < len(var.array) - 1 else [])
            yield joined, not quoted
            return
        if index is not None and var.array is not None and index.isdigit():
            el = var.array[int(index)] if int(index) < len(var.array) else []
            yield el, not quoted
            return
        if var.value is None:
            yield unknown, False
            return
        yield var.value, not quoted

