"""Shell words and commands, the values a batch script is read into, and a small lexer that names where a text
stops being shell.

:class:`Word`, :class:`Part` and :class:`Command` are what :mod:`ntui.core.compose.bashread` (tree-sitter's bash
grammar, the batch shell evaluated) reads a script into, and what the importer and the checks work on. The lexer
below (:func:`split_words`, :func:`commands`) is no longer how scripts are read: the grammar recovers from an
unterminated quote where bash does not, so where it had to recover, this lexer says on which line and column the
text stops being shell (:class:`ShellSyntax`).

Enough of bash's grammar for the scripts people submit: words split on blanks; single quotes, double quotes
(``\\"``, ``\\\\``, ``\\$`` and ``\\``` escaped inside), ``$'...'``, backslashes; ``$VAR``, ``${VAR...}``, ``$(...)``
and backquotes kept inside their word; ``#`` comments at a word's start; the operators ``;``, ``&``, ``&&``, ``||``,
``|`` and newlines between commands; redirections as words of their own; line continuations; here-documents
(their body skipped, its lines kept with the command). Each word keeps its parts and how each was quoted, which is
what tells ``'$SLURM_JOB_ID'`` (the literal text) from ``"$SLURM_JOB_ID"`` (the job id), and which variables the
batch shell itself expands. Pure; :class:`ShellSyntax` names the line and column it cannot read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

__all__ = ["Command", "Part", "ShellSyntax", "Word", "commands", "split_words"]

_OPERATORS = ("&&", "||", ";;", ";", "&", "|", "(", ")")
_REDIRECT = re.compile(r"[0-9]*(>>|>&|<&|<<-|<<<|<<|>\||>|<|&>>|&>)")
_VAR = re.compile(r"\$(?:\{#?([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])[^}]*\}|([A-Za-z_][A-Za-z0-9_]*)|([0-9@*#?$!-]))")


class ShellSyntax(ValueError):
    """A script the reader cannot split into words (an unterminated quote, ...), with where."""

    def __init__(self, line: int, column: int, message: str) -> None:
        super().__init__(f"line {line}, column {column}: {message}")
        self.line = line
        self.column = column
        self.message = message


@dataclass(frozen=True)
class Part:
    """A piece of a word: its text after quote removal and how it was quoted (``""`` none, ``"'"``, ``'"'``,
    ``"<redirect>"``; ``"$"`` where the reader evaluated the batch shell: an expansion it did not know the value
    of, kept as written)."""

    text: str
    quote: str
    line: int = 0  # the line its text was written on, where the reader knows it (0: the word's)


@dataclass(frozen=True)
class Word:
    """One shell word: its parts, its source text and the line it starts on."""

    parts: tuple[Part, ...]
    raw: str
    line: int

    @property
    def text(self) -> str:
        """The word after quote removal, nothing expanded (``$VAR`` stays as written)."""
        return "".join(p.text for p in self.parts)

    @property
    def expanded_vars(self) -> tuple[str, ...]:
        """The variables the shell that reads this word expands (outside single quotes)."""
        return tuple(v for p in self.parts if p.quote != "'" for v in _names(p.text))

    @property
    def literal_vars(self) -> tuple[str, ...]:
        """Variables written inside single quotes: the program gets ``$NAME`` as text."""
        return tuple(v for p in self.parts if p.quote == "'" for v in _names(p.text))

    @property
    def plain(self) -> bool:
        """No expansion at all: the shell gives the program exactly :attr:`text`."""
        return not self.expanded_vars and not any(p.quote != "'" and ("$(" in p.text or "`" in p.text)
                                                  for p in self.parts)


@dataclass
class Command:
    """A simple command: its words, the operator after it, the lines it spans and its nesting in compound
    commands (``if``/``for``/``while``/``case``/``{ }``/``( )`` depth)."""

    words: list[Word]
    line: int
    end_line: int
    depth: int
    separator: str = ""
    heredoc: list[str] = field(default_factory=list)
    construct: tuple[int, int] | None = None  # the lines of the compound command (at depth 0) it is part of
    expanded: list[Word] | None = None  # the words as the batch shell expands them, where the reader evaluated them
    scope: dict[str, object] = field(default_factory=dict)  # the evaluated shell's variables when it runs
    function: tuple[int, int] | None = None  # the lines of the function whose call ran it (its text is the body's)
    calls: tuple[int, int] | None = None  # a call of a function the script defines: the definition's lines

    @property
    def argv(self) -> list[str]:
        return [w.text for w in self.words]


def _names(text: str) -> list[str]:
    return [m.group(1) or m.group(2) or m.group(3) for m in _VAR.finditer(text)]


class _Reader:
    def __init__(self, text: str, first_line: int) -> None:
        self.s = text
        self.i = 0
        self.line = first_line
        self.col_start = 0

    def error(self, message: str) -> ShellSyntax:
        return ShellSyntax(self.line, self.i - self.col_start + 1, message)

    def peek(self, n: int = 0) -> str:
        j = self.i + n
        return self.s[j] if j < len(self.s) else ""

    def advance(self) -> str:
        c = self.s[self.i]
        self.i += 1
        if c == "\n":
            self.line += 1
            self.col_start = self.i
        return c


def _balanced(r: _Reader, open_: str, close: str, out: list[str]) -> None:
    """Copy a ``$(...)``/``${...}`` body (nesting and quotes inside respected) into ``out``."""
    depth = 1
    while depth:
        if r.i >= len(r.s):
            raise r.error(f"unterminated {open_}")
        c = r.advance()
        out.append(c)
        if c == "\\" and r.i < len(r.s):
            out.append(r.advance())
        elif c == "'" and open_ != "${":
            while r.i < len(r.s) and r.peek() != "'":
                out.append(r.advance())
            if r.i >= len(r.s):
                raise r.error("unterminated single quote")
            out.append(r.advance())
        elif c == open_[-1]:
            depth += 1
        elif c == close:
            depth -= 1


def _word(r: _Reader) -> Word:
    start, line = r.i, r.line
    parts: list[Part] = []
    buf: list[str] = []

    def flush(quote: str = "") -> None:
        if buf:
            parts.append(Part("".join(buf), quote))
            buf.clear()

    while r.i < len(r.s):
        c = r.peek()
        if c == "(" and not parts and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=", "".join(buf)):
            buf.append(r.advance())  # NAME=( ... ): an array's assignment, one word
            _balanced(r, "(", ")", buf)
            continue
        if c in " \t\n;&|()<>":
            break
        if c == "\\":
            r.advance()
            if r.peek() == "\n":
                r.advance()
                continue
            if r.i < len(r.s):
                flush()
                parts.append(Part(r.advance(), "'"))  # an escaped character is literal
            continue
        if c == "'":
            flush()
            at = (r.line, r.i - r.col_start + 1)
            r.advance()
            q: list[str] = []
            while r.i < len(r.s) and r.peek() != "'":
                q.append(r.advance())
            if r.i >= len(r.s):
                raise ShellSyntax(*at, "unterminated single quote")
            r.advance()
            parts.append(Part("".join(q), "'"))
            continue
        if c == "$" and r.peek(1) == "'":
            flush()
            at = (r.line, r.i - r.col_start + 1)
            r.advance()
            r.advance()
            q = []
            while r.i < len(r.s) and r.peek() != "'":
                if r.peek() == "\\":
                    q.append(r.advance())
                q.append(r.advance())
            if r.i >= len(r.s):
                raise ShellSyntax(*at, "unterminated $'...' quote")
            r.advance()
            parts.append(Part("".join(q), "'"))
            continue
        if c == '"':
            flush()
            at = (r.line, r.i - r.col_start + 1)
            r.advance()
            q = []
            while True:
                if r.i >= len(r.s):
                    raise ShellSyntax(*at, "unterminated double quote")
                d = r.advance()
                if d == '"':
                    break
                if d == "\\" and r.peek() in ('"', "\\", "$", "`", "\n"):
                    e = r.advance()
                    if e != "\n":  # an escaped character is literal text: a part of its own
                        if q:
                            parts.append(Part("".join(q), '"'))
                            q = []
                        parts.append(Part(e, "'"))
                    continue
                if d == "$" and r.peek() == "(":
                    q.append(d)
                    q.append(r.advance())
                    _balanced(r, "$(", ")", q)
                    continue
                q.append(d)
            parts.append(Part("".join(q), '"'))
            continue
        if c == "$" and r.peek(1) and r.peek(1) in "({":
            buf.append(r.advance())
            opener = r.advance()
            buf.append(opener)
            _balanced(r, "$" + opener, ")" if opener == "(" else "}", buf)
            continue
        if c == "`":
            at = (r.line, r.i - r.col_start + 1)
            buf.append(r.advance())
            while r.i < len(r.s) and r.peek() != "`":
                buf.append(r.advance())
            if r.i >= len(r.s):
                raise ShellSyntax(*at, "unterminated backquote")
            buf.append(r.advance())
            continue
        buf.append(r.advance())
    flush()
    return Word(tuple(parts), r.s[start:r.i], line)


_COMPOUND_OPEN = {"if", "for", "while", "until", "case", "{", "("}
_COMPOUND_CLOSE = {"fi", "done", "esac", "}", ")"}
_KEYWORD_PREFIX = {"then", "do", "else", "elif", "!"}


def split_words(text: str, first_line: int = 1) -> Iterator[Word | str]:
    """Words and operators (``;``, ``&&``, ..., ``\\n``) of ``text``; comments dropped."""
    r = _Reader(text, first_line)
    at_word_start = True
    while r.i < len(r.s):
        c = r.peek()
        if c in " \t":
            r.advance()
            at_word_start = True
            continue
        if c == "\\" and r.peek(1) == "\n":
            r.advance()
            r.advance()
            continue
        if c == "\n":
            r.advance()
            at_word_start = True
            yield "\n"
            continue
        if c == "#" and at_word_start:
            while r.i < len(r.s) and r.peek() != "\n":
                r.advance()
            continue
        m = _REDIRECT.match(r.s, r.i)
        if m is not None and (m.group(0)[0] in "<>&" or at_word_start):
            line = r.line
            for _ in m.group(0):
                r.advance()
            while r.peek() and r.peek() in " \t":  # peek() is "" at the end, and "" is in every string
                r.advance()
            target = _word(r) if r.i < len(r.s) and r.peek() not in "\n;&|" else Word((), "", line)
            yield Word((Part(m.group(0), "<redirect>"), *target.parts), m.group(0) + target.raw, line)
            at_word_start = True
            continue
        op = next((o for o in _OPERATORS if r.s.startswith(o, r.i)), None)
        if op is not None:
            for _ in op:
                r.advance()
            at_word_start = True
            yield op
            continue
        yield _word(r)
        at_word_start = False


def commands(text: str) -> list[Command]:
    """The simple commands of a script, in order, each with its lines and compound depth; a here-document's body
    (``<<EOF`` ... ``EOF``) is attached to its command and not read as commands."""
    lines = text.split("\n")
    out: list[Command] = []
    depth = 0
    current: list[Word] = []
    cmd_line = 0
    pending_heredocs: list[tuple[str, bool]] = []
    # Here-documents: read line by line, so that their bodies can be skipped before the words are split.
    buffer: list[str] = []
    buffer_start = 1
    n = 0
    chunks: list[tuple[int, str, list[str]]] = []  # (first line, text, heredoc body lines)
    while n < len(lines):
        line = lines[n]
        if not buffer:
            buffer_start = n + 1
        buffer.append(line)
        n += 1
        joined = "\n".join(buffer)
        for m in re.finditer(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1", line):
            pending_heredocs.append((m.group(2), "-" in m.group(0)[:3]))
        if pending_heredocs and not _open_quote(joined):
            body: list[str] = []
            for delim, strip_tabs in pending_heredocs:
                while n < len(lines):
                    here = lines[n]
                    n += 1
                    if (here.lstrip("\t") if strip_tabs else here) == delim:
                        break
                    body.append(here)
            pending_heredocs = []
            chunks.append((buffer_start, joined, body))
            buffer = []
    if buffer:
        chunks.append((buffer_start, "\n".join(buffer), []))
    construct_start: int | None = None  # the first line of the compound command at depth 0 being read
    function_def = False
    for start, chunk, body in chunks:
        for tok in split_words(chunk + "\n", start):
            if isinstance(tok, Word):
                if not current:
                    cmd_line = tok.line
                    if tok.text in _COMPOUND_CLOSE and not tok.parts[0].quote:
                        depth = max(0, depth - 1)
                current.append(tok)
                continue
            if tok == "(" and len(current) == 1 and not function_def:
                function_def = True  # NAME() { ...; }: a function's definition opens with its brace
                if depth == 0:
                    construct_start = current[0].line
                current = []
                continue
            if tok == ")" and function_def and not current:
                continue
            if tok == "(" and not current:
                if depth == 0:
                    construct_start = None
                depth += 1
                continue
            if tok == ")" and not current:
                depth = max(0, depth - 1)
                continue
            if current:
                while current and current[0].text in _KEYWORD_PREFIX and not current[0].parts[0].quote:
                    current = current[1:]  # then/do/else: the command after them is what runs
                if not current:
                    continue
                first = current[0].text
                opened = first in _COMPOUND_OPEN and not current[0].parts[0].quote
                last_line = current[-1].line + current[-1].raw.count("\n")
                if opened and depth == 0 and construct_start is None:
                    construct_start = cmd_line
                command = Command(current, cmd_line, last_line, depth, tok if tok != "\n" else "")
                if opened:
                    depth += 1
                    function_def = False
                if construct_start is not None:
                    command.construct = (construct_start, last_line)
                    if depth == 0:
                        for c in reversed(out):  # the construct's every command learns where it ends
                            if c.construct is None or c.construct[0] != construct_start:
                                break
                            c.construct = (construct_start, last_line)
                        construct_start = None
                out.append(command)
                current = []
        if body and out:
            out[-1].heredoc = body
    return out


def _open_quote(text: str) -> bool:
    """Whether ``text`` ends inside a quote (a here-document's delimiter inside it is no delimiter yet)."""
    try:
        for _ in split_words(text):
            pass
    except ShellSyntax:
        return True
    return False
